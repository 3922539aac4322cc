/*
 * fused_ops_test.cpp — the optional groups as callers find them (backend.h's queries), and the
 * fused ops' fallback (fused_ops.h, namespace composed): a network on a backend that offers only
 * the required ops runs the ReLU folds as their composition, its convolutions unfused from their
 * pooling and in fp32 NCHW, and gives the CPU backend's numbers bit for bit, which is the rule
 * every fused op keeps.
 */
#include "trainer/backend/fused_ops.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "gradcheck.h"
#include "required_only_backend.h"
#include "same_passes.h"
#include "trainer/cpu/cpu_backend.h"
#include "trainer/models.h"
#include "trainer/network.h"

namespace sweep::trainer {
namespace {

using testing::random_vector;
using testing::RequiredOnlyBackend;
using testing::to_float;

TEST(BackendGroups, EachBackendOffersItsOwn) {
  RequiredOnlyBackend plain(1);
  EXPECT_EQ(plain.fused_ops(), nullptr);
  EXPECT_EQ(plain.channels_last_ops(), nullptr);
  EXPECT_EQ(plain.graph_capture(), nullptr);
  EXPECT_EQ(plain.shape_tuning(), nullptr);
  CpuBackend cpu(1);
  EXPECT_EQ(cpu.fused_ops(), static_cast<FusedOps*>(&cpu));
  EXPECT_EQ(cpu.channels_last_ops(), static_cast<ChannelsLastOps*>(&cpu));
  EXPECT_EQ(cpu.graph_capture(), nullptr);
  EXPECT_EQ(cpu.shape_tuning(), nullptr);
}

TEST(FusedOps, TheFoldsFallBackToTheirComposition) {
  RequiredOnlyBackend plain(1);
  CpuBackend cpu(1);
  std::mt19937_64 rng(5);
  const int n = 3, in = 4, out = 5;
  const auto x = to_float(random_vector(std::size_t(n) * in, rng));
  const auto w = to_float(random_vector(std::size_t(out) * in, rng));
  const auto b = to_float(random_vector(std::size_t(out), rng));
  std::vector<float> folded(std::size_t(n) * out), by_hand(folded.size());
  dense_forward_relu(plain, x.data(), w.data(), b.data(), folded.data(), n, in, out);
  cpu.dense_forward(x.data(), w.data(), b.data(), by_hand.data(), n, in, out);
  cpu.relu_forward(by_hand.data(), by_hand.data(), by_hand.size());
  EXPECT_EQ(folded, by_hand);
  std::vector<float> sum(x.size()), sum_by_hand(x.size());
  const auto y = to_float(random_vector(x.size(), rng));
  add_relu(plain, x.data(), y.data(), sum.data(), x.size());
  cpu.add(x.data(), y.data(), sum_by_hand.data(), x.size());
  cpu.relu_forward(sum_by_hand.data(), sum_by_hand.data(), x.size());
  EXPECT_EQ(sum, sum_by_hand);
}

// One training forward, an inference forward and a backward of `model` on both backends from
// the same weights: logits and gradients equal bit for bit.
void expect_same_bits(const ModelSpec& model, Shape in) {
  const int batch = 4, classes = 5;
  RequiredOnlyBackend plain(1);
  CpuBackend cpu(1);
  Network a(cpu, model, in, classes, batch, 7);
  Network b(plain, model, in, classes, batch, 7);
  std::mt19937_64 rng(9);
  testing::expect_same_passes(a, b, in, batch, classes, rng);
}

TEST(FusedOps, ANetworkWithoutTheGroupGivesTheSameBits) {
  ModelSpec lenet;  // convolutions pooled by their own op on the CPU, dense layers with ReLUs
  lenet.preset = Preset::lenet;
  expect_same_bits(lenet, Shape{1, 28, 28});
  ModelSpec convnet;  // batch norms followed by ReLUs
  convnet.preset = Preset::convnet;
  convnet.net_width = 8;
  convnet.block_depth = 1;
  expect_same_bits(convnet, Shape{1, 12, 12});
  ModelSpec resnet;  // residual sums with the ReLU after them
  resnet.preset = Preset::resnet;
  resnet.depth = 20;
  expect_same_bits(resnet, Shape{3, 8, 8});
}

}  // namespace
}  // namespace sweep::trainer
