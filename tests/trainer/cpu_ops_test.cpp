/*
 * cpu_ops_test.cpp — every non-matrix op of the CPU backend against the double references:
 * pooling, relu, batch norm, dropout, loss, argmax, norms, the optimizer update and the batch
 * gather. Inputs are fresh random values (never zeros, which hide missing writes), and outputs
 * are pre-filled with garbage so an element the op forgets to write shows up.
 */
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "common/check.h"
#include "gradcheck.h"
#include "op_geometry.h"
#include "reference_ops.h"
#include "trainer/cpu/cpu_backend.h"
#include "trainer/cpu/parallel.h"

namespace sweep::trainer {
namespace {

using testing::all_close;
using testing::float_rounded;
using testing::pool_geom;
using testing::random_vector;
using testing::to_float;

constexpr float kGarbage = 1234.5f;

struct PoolCase {
  const char* name;
  PoolGeom g;
};
class CpuPool : public ::testing::TestWithParam<PoolCase> {};

TEST_P(CpuPool, MaxAndAverageMatchReference) {
  const PoolGeom g = GetParam().g;
  std::mt19937_64 rng(5 + g.h * 3 + g.n);
  const std::size_t xs = std::size_t(g.n) * g.c * g.h * g.w;
  const std::size_t ys = std::size_t(g.n) * g.c * g.out_h * g.out_w;
  auto x = float_rounded(random_vector(xs, rng));
  x[3] = x[4];  // a tie inside a window: both must route to the first
  const auto dy = float_rounded(random_vector(ys, rng));
  CpuBackend cpu(2);
  const auto xf = to_float(x), dyf = to_float(dy);
  for (PoolMode mode : {PoolMode::max, PoolMode::average}) {
    std::vector<double> y_ref(ys), dx_ref(xs);
    ref::pool_forward(g, mode, x.data(), y_ref.data());
    ref::pool_backward(g, mode, x.data(), y_ref.data(), dy.data(), dx_ref.data());
    std::vector<float> y(ys, kGarbage), dx(xs, kGarbage);
    cpu.pool_forward(g, mode, xf.data(), y.data());
    cpu.pool_backward(g, mode, xf.data(), y.data(), dyf.data(), dx.data());
    EXPECT_TRUE(all_close(y, y_ref, 1e-6, 1e-6)) << (mode == PoolMode::max ? "max" : "avg");
    EXPECT_TRUE(all_close(dx, dx_ref, 1e-6, 1e-6)) << (mode == PoolMode::max ? "max" : "avg");
  }
}

INSTANTIATE_TEST_SUITE_P(
    PoolShapes, CpuPool,
    ::testing::Values(PoolCase{"k2s2", pool_geom(2, 3, 8, 8, 2, 2, 0)},
                      PoolCase{"odd", pool_geom(3, 2, 7, 5, 2, 2, 0)},
                      PoolCase{"overlap", pool_geom(2, 2, 9, 9, 3, 2, 0)},
                      PoolCase{"pad", pool_geom(2, 2, 6, 7, 3, 2, 1)},
                      PoolCase{"stride1pad", pool_geom(1, 3, 5, 5, 3, 1, 1)},
                      PoolCase{"global", PoolGeom{3, 4, 5, 6, 5, 6, 5, 6, 0, 0, 1, 1}},
                      PoolCase{"batch1", pool_geom(1, 1, 4, 4, 2, 2, 0)}),
    [](const ::testing::TestParamInfo<PoolCase>& p) { return std::string(p.param.name); });

// Pool2d's path for every 2x2 max pooling (the argmax kept by the forward, read by the backward)
// gives pool_forward's y and pool_backward's dx bit for bit: ties (a window of zeros, as after a
// relu; two equal maxima), a window holding a NaN (no element takes its gradient), trailing odd
// rows and columns (zero), every element written (outputs pre-filled with garbage).
TEST(CpuOps, MaxPool2x2ArgmaxGivesThePoolingsBits) {
  CpuBackend cpu(2);
  for (const PoolGeom& g : {pool_geom(2, 3, 8, 8, 2, 2, 0), pool_geom(3, 2, 7, 5, 2, 2, 0),
                            pool_geom(1, 2, 6, 9, 2, 2, 0)}) {
    const std::string tag = std::to_string(g.h) + "x" + std::to_string(g.w);
    std::mt19937_64 rng(11 + g.h);
    const std::size_t xs = std::size_t(g.n) * g.c * g.h * g.w;
    const std::size_t ys = std::size_t(g.n) * g.c * g.out_h * g.out_w;
    auto x = to_float(float_rounded(random_vector(xs, rng)));
    std::fill(x.begin(), x.begin() + 2 * g.w, 0.f);  // the first row of windows: all ties
    x[2 * g.w + 2] = x[2 * g.w + 3] = 5.f;           // two equal maxima in one window
    x[4 * g.w] = std::nanf("");  // a window led by a NaN (std::max then keeps it)
    const auto dy = to_float(float_rounded(random_vector(ys, rng)));
    std::vector<float> y(ys, kGarbage), dx(xs, kGarbage), y2(ys, kGarbage), dx2(xs, kGarbage);
    std::vector<std::uint8_t> argmax(ys, 77);
    cpu.pool_forward(g, PoolMode::max, x.data(), y.data());
    cpu.pool_backward(g, PoolMode::max, x.data(), y.data(), dy.data(), dx.data());
    cpu.maxpool2x2_forward_argmax(g, x.data(), y2.data(), argmax.data());
    cpu.maxpool2x2_backward_argmax(g, argmax.data(), dy.data(), dx2.data());
    EXPECT_EQ(std::memcmp(y.data(), y2.data(), ys * sizeof(float)), 0) << tag;
    EXPECT_EQ(std::memcmp(dx.data(), dx2.data(), xs * sizeof(float)), 0) << tag;
    EXPECT_EQ(argmax[0], 0) << tag << ": a tie goes to the window's first element";
    EXPECT_EQ(argmax[std::size_t(g.out_w) + 1], 0) << tag << ": the first of two equal maxima";
    EXPECT_EQ(argmax[2 * std::size_t(g.out_w)], 4) << tag << ": a NaN window routes nowhere";
    EXPECT_TRUE(std::isnan(y2[2 * std::size_t(g.out_w)])) << tag;
  }
}

// An inference forward asks for the pooled values only (argmax null): the same values, and of a
// convolution's fused pooling too.
TEST(CpuOps, MaxPool2x2WithoutArgmaxGivesTheSameValues) {
  CpuBackend cpu(2);
  const PoolGeom g = pool_geom(3, 2, 7, 5, 2, 2, 0);
  std::mt19937_64 rng(5);
  const std::size_t xs = std::size_t(g.n) * g.c * g.h * g.w;
  const std::size_t ys = std::size_t(g.n) * g.c * g.out_h * g.out_w;
  auto x = to_float(float_rounded(random_vector(xs, rng)));
  x[3] = std::nanf("");
  std::vector<float> y(ys, kGarbage), y2(ys, kGarbage);
  std::vector<std::uint8_t> argmax(ys, 77);
  cpu.maxpool2x2_forward_argmax(g, x.data(), y.data(), argmax.data());
  cpu.maxpool2x2_forward_argmax(g, x.data(), y2.data(), nullptr);
  EXPECT_EQ(std::memcmp(y.data(), y2.data(), ys * sizeof(float)), 0);
}

TEST(CpuOps, ReluForwardBackward) {
  std::mt19937_64 rng(1);
  const std::size_t n = 100003;  // above the parallel grain, odd
  const auto x = float_rounded(random_vector(n, rng)), dy = float_rounded(random_vector(n, rng));
  std::vector<double> y_ref(n), dx_ref(n);
  ref::relu_forward(x.data(), y_ref.data(), n);
  ref::relu_backward(y_ref.data(), dy.data(), dx_ref.data(), n);
  CpuBackend cpu(2);
  const auto xf = to_float(x), dyf = to_float(dy);
  std::vector<float> y(n, kGarbage), dx(n, kGarbage);
  cpu.relu_forward(xf.data(), y.data(), n);
  cpu.relu_backward(y.data(), dyf.data(), dx.data(), n);
  EXPECT_TRUE(all_close(y, y_ref, 0, 0));
  EXPECT_TRUE(all_close(dx, dx_ref, 0, 0));
}

struct BnCase {
  int n, c, hw;
};
class CpuBatchNorm : public ::testing::TestWithParam<BnCase> {};

TEST_P(CpuBatchNorm, TrainInferBackwardMatchReference) {
  const auto [n, c, hw] = GetParam();
  const BatchNormGeom g{n, c, hw, 1e-5f, 0.1f};
  std::mt19937_64 rng(9 + n + c);
  const std::size_t xs = std::size_t(n) * c * hw;
  // An offset and scale per run so the statistics are far from (0, 1).
  auto x = random_vector(xs, rng, 2.0, 5.0);
  x = float_rounded(x);
  const auto gamma = float_rounded(random_vector(c, rng, 0.5, 1.5));
  const auto beta = float_rounded(random_vector(c, rng));
  const auto dy = float_rounded(random_vector(xs, rng));
  auto rm_ref = float_rounded(random_vector(c, rng)),
       rv_ref = float_rounded(random_vector(c, rng, 0.5, 2));
  std::vector<double> y_ref(xs), mean_ref(c), inv_ref(c), dx_ref(xs), dg_ref(c), db_ref(c),
      yi_ref(xs);
  auto rmf = to_float(rm_ref), rvf = to_float(rv_ref);
  ref::batchnorm_forward_train(g, x.data(), gamma.data(), beta.data(), rm_ref.data(), rv_ref.data(),
                               mean_ref.data(), inv_ref.data(), y_ref.data());
  ref::batchnorm_backward(g, x.data(), dy.data(), gamma.data(), mean_ref.data(), inv_ref.data(),
                          dx_ref.data(), dg_ref.data(), db_ref.data());
  ref::batchnorm_forward_infer(g, x.data(), gamma.data(), beta.data(), rm_ref.data(), rv_ref.data(),
                               yi_ref.data());

  CpuBackend cpu(2);
  const auto xf = to_float(x), gf = to_float(gamma), bf = to_float(beta), dyf = to_float(dy);
  std::vector<float> y(xs, kGarbage), mean(c), inv(c), dx(xs, kGarbage), dg(c, kGarbage),
      db(c, kGarbage), yi(xs, kGarbage);
  cpu.batchnorm_forward_train(g, xf.data(), gf.data(), bf.data(), rmf.data(), rvf.data(),
                              mean.data(), inv.data(), y.data());
  cpu.batchnorm_backward(g, xf.data(), dyf.data(), gf.data(), mean.data(), inv.data(), dx.data(),
                         dg.data(), db.data());
  cpu.batchnorm_forward_infer(g, xf.data(), gf.data(), bf.data(), rmf.data(), rvf.data(),
                              yi.data());
  EXPECT_TRUE(all_close(y, y_ref, 1e-4, 1e-4));
  EXPECT_TRUE(all_close(mean, mean_ref, 1e-5, 1e-5));
  EXPECT_TRUE(all_close(inv, inv_ref, 1e-5, 1e-4));
  EXPECT_TRUE(all_close(rmf, rm_ref, 1e-5, 1e-5));
  EXPECT_TRUE(all_close(rvf, rv_ref, 1e-5, 1e-4));  // unbiased variance in the running estimate
  EXPECT_TRUE(all_close(dx, dx_ref, 1e-4, 1e-3));
  EXPECT_TRUE(all_close(dg, dg_ref, 1e-4, 1e-4));
  EXPECT_TRUE(all_close(db, db_ref, 1e-4, 1e-4));
  EXPECT_TRUE(all_close(yi, yi_ref, 1e-4, 1e-4));
}

INSTANTIATE_TEST_SUITE_P(BnShapes, CpuBatchNorm,
                         ::testing::Values(BnCase{4, 3, 25}, BnCase{2, 5, 7}, BnCase{1, 4, 9},
                                           BnCase{16, 10, 1}, BnCase{2, 3, 1}, BnCase{64, 8, 64}));

TEST(CpuOps, DropoutMatchesReferenceAndKeepsTheRightFraction) {
  std::mt19937_64 rng(2);
  const std::size_t n = 200001;
  const float p = 0.3f;
  const auto x = float_rounded(random_vector(n, rng));
  std::vector<double> y_ref(n), mask_ref(n);
  ref::dropout_forward(x.data(), y_ref.data(), mask_ref.data(), n, p, 77, 1000);
  CpuBackend cpu(2);
  const auto xf = to_float(x);
  std::vector<float> y(n, kGarbage), mask(n, kGarbage), dx(n, kGarbage);
  cpu.dropout_forward(xf.data(), y.data(), mask.data(), n, p, 77, 1000);
  EXPECT_TRUE(all_close(mask, mask_ref, 1e-6, 1e-6));
  EXPECT_TRUE(all_close(y, y_ref, 1e-6, 1e-6));
  std::size_t dropped = 0;
  for (float m : mask) dropped += m == 0.f;
  EXPECT_NEAR(double(dropped) / n, p, 0.005);
  cpu.mul(xf.data(), mask.data(), dx.data(), n);  // dropout backward is dy * mask
  EXPECT_EQ(dx, y);
  // Another counter gives another mask.
  std::vector<float> mask2(n);
  cpu.dropout_forward(xf.data(), y.data(), mask2.data(), n, p, 77, 1000 + n);
  EXPECT_NE(mask, mask2);
}

TEST(CpuOps, SoftmaxCrossEntropyMatchesReferenceAndIsStable) {
  std::mt19937_64 rng(4);
  const int n = 37, classes = 10;
  auto logits = float_rounded(random_vector(std::size_t(n) * classes, rng, -5, 5));
  for (int j = 0; j < classes; ++j) logits[j] += 500.0;  // exp would overflow without the shift
  std::vector<std::int32_t> labels(n);
  for (int i = 0; i < n; ++i) labels[i] = static_cast<std::int32_t>(rng() % classes);
  std::vector<double> d_ref(logits.size());
  double correct_ref = 0;
  const double loss_ref = ref::softmax_cross_entropy(logits.data(), labels.data(), n, classes,
                                                     d_ref.data(), &correct_ref);

  CpuBackend cpu(2);
  const auto lf = to_float(logits);
  std::vector<float> d(lf.size(), kGarbage);
  double stats[2] = {10.0, 1.0};  // ADDS to what is there
  cpu.softmax_cross_entropy(lf.data(), labels.data(), n, classes, d.data(), stats);
  EXPECT_NEAR(stats[0] - 10.0, loss_ref * n, 1e-4 * n);
  EXPECT_EQ(stats[1] - 1.0, correct_ref);
  EXPECT_TRUE(all_close(d, d_ref, 1e-7, 1e-5));
  EXPECT_TRUE(std::isfinite(stats[0]));

  double only_stats[2] = {0, 0};
  cpu.softmax_cross_entropy(lf.data(), labels.data(), n, classes, nullptr, only_stats);
  EXPECT_DOUBLE_EQ(only_stats[0], stats[0] - 10.0);

  std::vector<std::int32_t> bad = labels;
  bad[5] = classes;
  EXPECT_THROW(cpu.softmax_cross_entropy(lf.data(), bad.data(), n, classes, nullptr, only_stats),
               Error);
}

TEST(CpuOps, ArgmaxTakesTheFirstMaximum) {
  const std::vector<float> logits = {1, 3, 3, 0, -1, -2, -1, -5, 0, 0, 0, 7};
  std::vector<std::int32_t> pred(3, -1);
  CpuBackend cpu(1);
  cpu.argmax(logits.data(), 3, 4, pred.data());
  EXPECT_EQ(pred, (std::vector<std::int32_t>{1, 0, 3}));
}

TEST(CpuOps, SumSquaresAndClipScale) {
  std::mt19937_64 rng(8);
  const std::size_t n = 300007;
  const auto x = random_vector(n, rng);
  const auto xf = to_float(x);
  double expect = 0;
  for (float v : xf) expect += double(v) * double(v);
  CpuBackend cpu(2);
  double acc = 1.5;
  cpu.sum_squares(xf.data(), n, &acc);
  EXPECT_NEAR(acc, expect + 1.5, 1e-9 * expect);
  float scale = 0;
  cpu.clip_scale(&acc, 5.f, &scale);
  EXPECT_NEAR(scale, 5.0 / (std::sqrt(acc) + 1e-6), 1e-6);
  cpu.clip_scale(&acc, 1e6f, &scale);
  EXPECT_EQ(scale, 1.f);
}

struct OptCase {
  const char* name;
  OptimizerStep step;
  bool scaled;
};
class CpuOptimizer : public ::testing::TestWithParam<OptCase> {};

TEST_P(CpuOptimizer, FiveStepsMatchReference) {
  OptimizerStep s = GetParam().step;
  std::mt19937_64 rng(12);
  const std::size_t n = 50001;
  auto p_ref = float_rounded(random_vector(n, rng));
  std::vector<double> s1_ref(n, 0.0), s2_ref(n, 0.0);
  auto pf = to_float(p_ref);
  std::vector<float> s1(n, 0.f), s2(n, 0.f);
  CpuBackend cpu(2);
  const float grad_scale = 0.5f;
  for (int t = 1; t <= 5; ++t) {
    s.t = t;
    const auto g = float_rounded(random_vector(n, rng));
    const auto gf = to_float(g);
    ref::optimizer_step(s, p_ref.data(), g.data(), s1_ref.data(), s2_ref.data(), n,
                        GetParam().scaled ? grad_scale : 1.0);
    cpu.optimizer_step(s, pf.data(), gf.data(), s1.data(), s2.data(), n,
                       GetParam().scaled ? &grad_scale : nullptr);
  }
  EXPECT_TRUE(all_close(pf, p_ref, 1e-6, 1e-5));
  EXPECT_TRUE(all_close(s1, s1_ref, 1e-6, 1e-4));
  if (s.kind == OptimizerKind::adam) {
    EXPECT_TRUE(all_close(s2, s2_ref, 1e-8, 1e-4));
  }
}

OptimizerStep opt(OptimizerKind kind, float lr, float wd, bool nesterov = false) {
  OptimizerStep s;
  s.kind = kind;
  s.lr = lr;
  s.weight_decay = wd;
  s.nesterov = nesterov;
  return s;
}

INSTANTIATE_TEST_SUITE_P(
    Kinds, CpuOptimizer,
    ::testing::Values(OptCase{"sgdm", opt(OptimizerKind::sgdm, 0.01f, 5e-4f), false},
                      OptCase{"nesterov", opt(OptimizerKind::sgdm, 0.05f, 0.f, true), false},
                      OptCase{"sgdm_scaled", opt(OptimizerKind::sgdm, 0.01f, 1e-3f), true},
                      OptCase{"adam", opt(OptimizerKind::adam, 1e-3f, 0.f), false},
                      OptCase{"adam_wd_scaled", opt(OptimizerKind::adam, 1e-3f, 1e-2f), true},
                      OptCase{"rmsprop", opt(OptimizerKind::rmsprop, 1e-3f, 5e-4f), false}),
    [](const ::testing::TestParamInfo<OptCase>& p) { return std::string(p.param.name); });

class CpuGather : public ::testing::TestWithParam<std::tuple<bool, int, int>> {};

TEST_P(CpuGather, MatchesReference) {
  const auto [flip, shift, channels] = GetParam();
  std::mt19937_64 rng(21);
  const int rows = 50, h = 7, w = 6, batch = 13;
  std::vector<std::uint8_t> images(std::size_t(rows) * channels * h * w), labels(rows);
  for (auto& v : images) v = static_cast<std::uint8_t>(rng() & 255u);
  for (auto& v : labels) v = static_cast<std::uint8_t>(rng() % 10);
  std::vector<std::int32_t> indices(batch);
  for (auto& v : indices) v = static_cast<std::int32_t>(rng() % rows);
  const float mean[4] = {0.1f, 0.2f, 0.3f, 0.4f}, stdev[4] = {0.5f, 0.25f, 1.f, 2.f};
  std::vector<float> scales, shifts;
  for (int c = 0; c < channels; ++c) {
    scales.push_back(1.f / (255.f * stdev[c]));
    shifts.push_back(-mean[c] / stdev[c]);
  }
  GatherDesc d;
  d.batch = batch;
  d.c = channels;
  d.h = h;
  d.w = w;
  d.images = images.data();
  d.labels = labels.data();
  d.indices = indices.data();
  d.scale = scales.data();
  d.shift = shifts.data();
  d.flip = flip;
  d.max_shift = shift;
  d.seed = 99;
  d.step = 3;
  const std::size_t xs = std::size_t(batch) * channels * h * w;
  std::vector<double> x_ref(xs);
  std::vector<std::int32_t> y_ref(batch), y(batch, -1);
  ref::gather_batch(d, mean, stdev, x_ref.data(), y_ref.data());
  std::vector<float> x(xs, kGarbage);
  CpuBackend cpu(2);
  cpu.gather_batch(d, x.data(), y.data());
  EXPECT_TRUE(all_close(x, x_ref, 1e-5, 1e-5));
  EXPECT_EQ(y, y_ref);
}

INSTANTIATE_TEST_SUITE_P(Augment, CpuGather,
                         ::testing::Combine(::testing::Bool(), ::testing::Values(0, 2),
                                            ::testing::Values(1, 3)));

TEST(CpuOps, GatherWithoutAugmentationIsANormalisedCopy) {
  const std::vector<std::uint8_t> images = {0, 255, 51, 102};  // one 1x2x2 image
  const std::vector<std::uint8_t> labels = {4};
  const std::vector<std::int32_t> indices = {0};
  const float scale = 1.f / (255.f * 0.5f), shift = -0.5f / 0.5f;
  GatherDesc d;
  d.batch = 1;
  d.c = 1;
  d.h = d.w = 2;
  d.images = images.data();
  d.labels = labels.data();
  d.indices = indices.data();
  d.scale = &scale;
  d.shift = &shift;
  std::vector<float> x(4);
  std::int32_t y = -1;
  CpuBackend cpu(1);
  cpu.gather_batch(d, x.data(), &y);
  EXPECT_EQ(y, 4);
  EXPECT_NEAR(x[0], -1.f, 1e-6);
  EXPECT_NEAR(x[1], 1.f, 1e-6);
  EXPECT_NEAR(x[2], (0.2f - 0.5f) / 0.5f, 1e-6);
  EXPECT_NEAR(x[3], (0.4f - 0.5f) / 0.5f, 1e-6);
}

TEST(CpuOps, MemoryIsZeroedAlignedAndCopies) {
  CpuBackend cpu(1);
  DeviceBuffer a(cpu, 1000 * sizeof(float)), b(cpu, 1000 * sizeof(float));
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(a.f()) % 64, 0u);
  for (int i = 0; i < 1000; ++i) EXPECT_EQ(a.f()[i], 0.f);
  cpu.fill(a.f(), 1000, 2.5f);
  cpu.copy(b.f(), a.f(), 1000 * sizeof(float));
  std::vector<float> host(1000);
  cpu.copy_to_host(host.data(), b.f(), 1000 * sizeof(float));
  EXPECT_EQ(host, std::vector<float>(1000, 2.5f));
  EXPECT_EQ(cpu.kind(), DeviceKind::cpu);
}

TEST(CpuOps, FactoryBuildsCpuAndExplainsMissingCuda) {
  auto cpu = make_backend(DeviceSpec{DeviceKind::cpu, 0, 1});
  EXPECT_EQ(cpu->kind(), DeviceKind::cpu);
  EXPECT_THROW(make_backend(DeviceSpec{DeviceKind::cpu, 0, -1}), Error);
  if (!cuda_backend_built()) {
    EXPECT_EQ(cuda_device_count(), 0);
    try {
      make_backend(DeviceSpec{DeviceKind::cuda, 0, 0});
      ADD_FAILURE() << "expected an error";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("SWEEP_WITH_CUDA=OFF"), std::string::npos);
    }
  }
}

}  // namespace
}  // namespace sweep::trainer

namespace sweep::trainer {
namespace {

// The thread count must not change a bit of a dense layer: its sgemm is split into slices by size
// only (cpu_backend.cpp kMaxGemmSlices). Split by thread count, OpenBLAS summed some rows of a
// smaller call in another order (AMD EPYC), and 1 and 2 threads gave different results.
TEST(CpuOps, DenseIsBitIdenticalForAnyThreadCount) {
  for (const auto& [n, in, out] : {std::tuple{50, 300, 70}, std::tuple{37, 1000, 61}}) {
    std::mt19937 rng(5);
    std::normal_distribution<float> normal;
    auto random = [&](std::size_t count) {
      std::vector<float> v(count);
      for (auto& x : v) x = normal(rng);
      return v;
    };
    const auto x = random(std::size_t(n) * in), w = random(std::size_t(out) * in),
               b = random(std::size_t(out)), dy = random(std::size_t(n) * out);
    auto run = [&](int threads) {
      CpuBackend cpu(threads);
      std::vector<float> y(std::size_t(n) * out), dx(std::size_t(n) * in);
      std::vector<float> dw(std::size_t(out) * in), db(static_cast<std::size_t>(out));
      cpu.dense_forward(x.data(), w.data(), b.data(), y.data(), n, in, out);
      cpu.dense_backward(x.data(), w.data(), dy.data(), dx.data(), dw.data(), db.data(), n, in,
                         out);
      y.insert(y.end(), dx.begin(), dx.end());
      y.insert(y.end(), dw.begin(), dw.end());
      y.insert(y.end(), db.begin(), db.end());
      return y;
    };
    const auto one = run(1);
    EXPECT_EQ(run(2), one) << n << "x" << in << "x" << out;
    EXPECT_EQ(run(3), one) << n << "x" << in << "x" << out;
  }
}

// A backend of one thread runs its loops on the calling thread without TBB (parallel.h): every
// slice, in order, and a range in one piece; the scratch slot is 0; the scope ends with the op.
TEST(CpuLoops, InASerialScopeEveryLoopRunsOnTheCallingThreadInOrder) {
  const std::thread::id me = std::this_thread::get_id();
  std::vector<std::size_t> slices;
  std::vector<std::pair<std::size_t, std::size_t>> ranges;
  bool elsewhere = false;
  {
    cpu::SerialScope serial;
    cpu::for_slices(8, [&](std::size_t s) {
      elsewhere |= std::this_thread::get_id() != me;
      slices.push_back(s);
      EXPECT_EQ(cpu::thread_slot(), 0u);
    });
    cpu::for_range(std::size_t{1} << 20, 16, [&](std::size_t b, std::size_t e) {
      elsewhere |= std::this_thread::get_id() != me;
      ranges.emplace_back(b, e);
    });
  }
  EXPECT_FALSE(elsewhere);
  EXPECT_EQ(slices, (std::vector<std::size_t>{0, 1, 2, 3, 4, 5, 6, 7}));
  ASSERT_EQ(ranges.size(), 1u);
  EXPECT_EQ(ranges[0], (std::pair<std::size_t, std::size_t>{0, std::size_t{1} << 20}));
  EXPECT_FALSE(cpu::serial_here);
  // Outside the scope a large range is split into tasks again.
  std::atomic<int> calls{0};
  cpu::for_range(std::size_t{1} << 20, 16, [&](std::size_t, std::size_t) { ++calls; });
  EXPECT_GT(calls.load(), 1);
}

}  // namespace
}  // namespace sweep::trainer
