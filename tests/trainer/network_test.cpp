/*
 * network_test.cpp — Network construction (presets, custom lists, errors), the flat parameter
 * layout, seeding, and forward/backward plumbing on the CPU backend.
 *
 * The numerical side of a whole network is pinned by golden_test.cpp (against PyTorch); here a
 * small network's gradient is also checked end to end by finite differences of the float loss,
 * with a step and tolerance suited to float.
 */
#include "trainer/network.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "common/check.h"
#include "dropout_steps.h"
#include "gradcheck.h"
#include "network_gradcheck.h"
#include "same_passes.h"
#include "trainer/cpu/cpu_backend.h"
#include "trainer/layers/layer.h"
#include "trainer/models.h"

namespace sweep::trainer {
namespace {

using testing::random_vector;
using testing::to_float;

ModelSpec preset(const std::string& name) {
  ModelSpec m;
  m.preset = *parse_word<Preset>(name);
  return m;
}

LayerSpec layer(const std::string& type, std::map<std::string, double> num = {},
                std::map<std::string, std::string> str = {}) {
  return LayerSpec{find_layer(type)->kind, std::move(num), std::move(str)};
}

ModelSpec custom(std::vector<LayerSpec> layers) {
  ModelSpec m;
  m.preset = sweep::trainer::Preset::none;
  m.layers = std::move(layers);
  return m;
}

std::string error_of(const ModelSpec& m, Shape in, int classes = 10) {
  try {
    check_model(m, in, classes);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(Network, LenetMatchesCaffeShapesAndParameterCount) {
  CpuBackend cpu(1);
  Network net(cpu, preset("lenet"), Shape{1, 28, 28}, 10, 8, 1);
  // conv 20@5x5: 520, conv 50@5x5: 25050, dense 800->500: 400500, dense 500->10: 5010
  EXPECT_EQ(net.param_count(), 520u + 25050u + 400500u + 5010u);
  EXPECT_EQ(net.state_count(), 0u);
  const auto& layers = net.layers();
  ASSERT_EQ(layers.size(), 8u);
  const char* types[] = {"conv", "maxpool", "conv", "maxpool", "flatten", "dense", "relu", "dense"};
  for (std::size_t i = 0; i < layers.size(); ++i) EXPECT_EQ(layers[i]->type(), types[i]);
  EXPECT_EQ(layers[3]->out_shape(), (Shape{50, 4, 4}));
  EXPECT_EQ(net.summary().find("conv 20@5x5") != std::string::npos, true);
  EXPECT_NE(net.summary().find("431080"), std::string::npos);
}

TEST(Network, ConvnetFollowsTheMatlabExample) {
  CpuBackend cpu(1);
  ModelSpec m = preset("convnet");
  m.net_width = 4;
  m.block_depth = 2;
  Network net(cpu, m, Shape{3, 16, 16}, 10, 4, 1);
  // 3 blocks x 2 x [conv, bn, relu] + 2 maxpools + gap + dense
  EXPECT_EQ(net.layers().size(), 3u * 2 * 3 + 2 + 2);
  const std::size_t convs =
      4 * 3 * 9 + 4 * 4 * 9 + 8 * 4 * 9 + 8 * 8 * 9 + 16 * 8 * 9 + 16 * 16 * 9;
  const std::size_t bns = 2 * (4 + 4 + 8 + 8 + 16 + 16);
  EXPECT_EQ(net.param_count(), convs + bns + 16 * 10 + 10);
  EXPECT_EQ(net.state_count(), bns);
  EXPECT_EQ(net.layers()[net.layers().size() - 2]->out_shape(), (Shape{16, 1, 1}));
}

TEST(Network, MlpWithDropout) {
  CpuBackend cpu(1);
  ModelSpec m = preset("mlp");
  m.hidden = {32, 16};
  m.dropout = 0.25;
  Network net(cpu, m, Shape{1, 6, 6}, 3, 4, 1);
  EXPECT_EQ(net.layers().size(), 1u + 2 * 3 + 1);
  EXPECT_EQ(net.param_count(), 36u * 32 + 32 + 32 * 16 + 16 + 16 * 3 + 3);
}

TEST(Network, CustomListGetsAFinalDenseAndFlattensImplicitly) {
  ModelSpec m = custom({layer("conv", {{"filters", 4}, {"kernel", 3}}, {{"padding", "same"}}),
                        layer("relu"), layer("dense", {{"units", 7}})});
  EXPECT_EQ(model_layer_specs(m, 10).size(), 4u);  // dense 7 is not the classes: one appended
  EXPECT_EQ(check_model(m, Shape{1, 5, 5}, 10), 4u * 9 + 4 + 100u * 7 + 7 + 7u * 10 + 10);
  ModelSpec ends = custom({layer("flatten"), layer("dense", {{"units", 10}})});
  EXPECT_EQ(model_layer_specs(ends, 10).size(), 2u);
}

TEST(Network, ErrorsNameTheLayerAndTheProblem) {
  EXPECT_NE(error_of(preset("lenet"), Shape{1, 8, 8})
                .find("model layer 3 of 8 (conv): kernel 5x5 is "
                      "larger than its input 2x2"),
            std::string::npos)
      << error_of(preset("lenet"), Shape{1, 8, 8});
  EXPECT_NE(error_of(custom({layer("conv", {{"kernel", 3}})}), Shape{1, 8, 8})
                .find("missing required argument 'filters'"),
            std::string::npos);
  EXPECT_NE(error_of(custom({layer("conv", {{"filter", 3}, {"filters", 2}, {"kernel", 3}})}),
                     Shape{1, 8, 8})
                .find("unknown argument 'filter'"),
            std::string::npos);
  EXPECT_NE(
      error_of(custom({layer("conv", {{"filters", 2}, {"kernel", 4}}, {{"padding", "same"}})}),
               Shape{1, 8, 8})
          .find("odd kernel"),
      std::string::npos);
  EXPECT_NE(error_of(custom({layer("maxpool", {{"size", 4}}), layer("maxpool", {{"size", 4}})}),
                     Shape{1, 6, 6})
                .find("layer 2 of 3 (maxpool): window 4x4 is larger than its input 1x1"),
            std::string::npos);
  EXPECT_NE(error_of(custom({layer("dense", {{"units", 2.5}})}), Shape{1, 2, 2})
                .find("layer 1 of 2 (dense): argument 'units' must be >= 1, got 2.5"),
            std::string::npos);
  EXPECT_NE(
      error_of(custom({layer("dropout")}), Shape{1, 2, 2}).find("missing required argument 'rate'"),
      std::string::npos);
  // An unknown layer type or preset cannot be written in C++ (they are enums); the YAML reader
  // refuses the words (tests/sweep/config/bad_configs_test.cpp).
  ModelSpec no_preset;
  no_preset.preset = Preset::none;
  EXPECT_NE(error_of(no_preset, Shape{1, 2, 2}).find("model has no layers"), std::string::npos);
  // Every argument the table knows is checked by its kind.
  EXPECT_NE(error_of(custom({layer("batchnorm", {{"eps", 0}})}), Shape{1, 2, 2})
                .find("argument 'eps' must be > 0, got 0"),
            std::string::npos);
  EXPECT_NE(error_of(custom({}), Shape{1, 2, 2}).find("model has no layers"), std::string::npos);
  EXPECT_NE(error_of(preset("lenet"), Shape{0, 28, 28}).find("empty dimension"), std::string::npos);

  CpuBackend cpu(1);
  EXPECT_THROW(Network(cpu, preset("lenet"), Shape{1, 8, 8}, 10, 4, 1), Error);
  Network net(cpu, preset("mlp"), Shape{1, 4, 4}, 2, 4, 1);
  std::vector<float> x(5 * 16);
  EXPECT_THROW(net.forward(x.data(), 5, true), Error);  // above max_batch
  EXPECT_THROW(net.forward(x.data(), 0, true), Error);
  net.forward(x.data(), 4, true);
  std::vector<float> d(3 * 2);
  EXPECT_THROW(net.backward(d.data(), 3), Error);  // not the forward's batch
}

TEST(Network, SeedDecidesTheInitialWeightsAndLayoutIsWeightThenBias) {
  CpuBackend cpu(1);
  Network a(cpu, preset("lenet"), Shape{1, 28, 28}, 10, 2, 7);
  Network b(cpu, preset("lenet"), Shape{1, 28, 28}, 10, 2, 7);
  Network c(cpu, preset("lenet"), Shape{1, 28, 28}, 10, 2, 8);
  const std::vector<float> pa(a.params(), a.params() + a.param_count());
  EXPECT_EQ(pa, std::vector<float>(b.params(), b.params() + b.param_count()));
  EXPECT_NE(pa, std::vector<float>(c.params(), c.params() + c.param_count()));
  // conv1 weight (20, 1, 5, 5) bound 1/5, then its bias with the same bound; dense 800->500 bound
  // 1/sqrt(800) starts at offset 520 + 25050.
  for (std::size_t i = 0; i < 520; ++i) EXPECT_LE(std::fabs(pa[i]), 0.2f);
  for (std::size_t i = 25570; i < 25570 + 400500; ++i)
    ASSERT_LE(std::fabs(pa[i]), 1.f / std::sqrt(800.f));
}

TEST(Network, BatchNormFirstAndFlattenFirstBackwardWork) {
  CpuBackend cpu(1);
  for (const ModelSpec& m :
       {custom({layer("batchnorm"), layer("conv", {{"filters", 2}, {"kernel", 3}})}),
        custom({layer("flatten"), layer("batchnorm"), layer("dense", {{"units", 4}})}),
        custom({layer("relu"), layer("flatten"), layer("dense", {{"units", 3}})})}) {
    Network net(cpu, m, Shape{2, 4, 4}, 3, 4, 1);
    std::mt19937_64 rng(1);
    const auto x = to_float(random_vector(4 * 32, rng));
    const auto d = to_float(random_vector(4 * 3, rng));
    net.forward(x.data(), 4, true);
    net.backward(d.data(), 4);
    double norm = 0;
    for (std::size_t i = 0; i < net.param_count(); ++i) norm += std::fabs(net.grads()[i]);
    EXPECT_GT(norm, 0.0);
  }
}

TEST(Network, DropoutMasksChangeWithTheStepAndVanishAtInference) {
  CpuBackend cpu(1);
  ModelSpec m = preset("mlp");
  m.hidden = {64};
  m.dropout = 0.5;
  Network net(cpu, m, Shape{1, 4, 4}, 3, 2, 1);
  std::mt19937_64 rng(2);
  const auto x = to_float(random_vector(32, rng));
  const std::vector<float> t1 = testing::expect_dropout_follows_the_step(net, x, 2, 6);
  const float* inference = net.forward(x.data(), 2, false);
  EXPECT_NE(std::vector<float>(inference, inference + 6), t1);
}

// End to end in float: d(loss)/d(param) from backward against central differences of the loss
// computed by forward, for a sample of parameters of a small convnet with batch norm.
TEST(Network, GradientMatchesFiniteDifferencesOfTheLoss) {
  CpuBackend cpu(1);
  ModelSpec m =
      custom({layer("conv", {{"filters", 3}, {"kernel", 3}, {"stride", 2}, {"padding", 1}}),
              layer("batchnorm"), layer("relu"), layer("avgpool", {{"size", 2}}),
              layer("conv", {{"filters", 4}, {"kernel", 1}}), layer("maxpool", {{"size", 2}}),
              layer("dense", {{"units", 5}})});
  const int batch = 3, classes = 4;
  Network net(cpu, m, Shape{2, 9, 9}, classes, batch, 3);
  std::mt19937_64 rng(4);
  const auto x = to_float(random_vector(std::size_t(batch) * 2 * 81, rng));
  const std::vector<std::int32_t> labels = {0, 3, 1};
  EXPECT_GT(testing::expect_network_gradient_matches(cpu, net, x, labels, classes, 4, 1e-2f), 20u);
}

// `folded` and `plain` are the same network but for views that keep `plain` from folding: their
// logits (training and inference forwards) and every gradient must be equal bit for bit, and some
// gradients must be zero (the ReLUs really cut) where `cuts`.
void expect_fold_changes_nothing(const ModelSpec& folded, const ModelSpec& plain, Shape in,
                                 std::uint64_t seed, bool cuts = true) {
  CpuBackend cpu(1);
  const int batch = 4, classes = 5;
  Network a(cpu, folded, in, classes, batch, 7);
  Network b(cpu, plain, in, classes, batch, 7);
  ASSERT_EQ(a.param_count(), b.param_count());
  std::mt19937_64 rng(seed);
  testing::expect_same_passes(a, b, in, batch, classes, rng);
  const std::vector<float> ga(a.grads(), a.grads() + a.param_count());
  if (!cuts) return;
  std::size_t zero = 0;
  for (float g : ga) zero += g == 0.f;
  EXPECT_GT(zero, 0u);
}

// A ReLU next to a dense layer is folded into it (forward: the dense layer writes the ReLU's
// output; backward: the dense layer after a ReLU passes dx through it). The same network with a
// flatten (a view, no parameters) between each such pair folds nothing. Covers a leading ReLU
// (never run backward), a dense-ReLU-dense pair (both folds) and a ReLU whose next layer is not
// dense (forward folded, backward its own).
TEST(Network, ReluFoldedIntoDenseLayersGivesTheUnfoldedNumbers) {
  const LayerSpec relu = layer("relu"), flat = layer("flatten");
  const auto dense = [](int units) { return layer("dense", {{"units", units}}); };
  expect_fold_changes_nothing(
      custom({relu, dense(12), relu, dense(9), relu, flat, dense(5)}),
      custom({relu, dense(12), flat, relu, flat, dense(9), flat, relu, flat, dense(5)}),
      Shape{2, 3, 3}, 6);
}

// A ReLU after a batch norm is folded into it both ways (BatchNorm::fuse_relu_after): forward the
// batch norm writes the ReLU's output, backward it takes the ReLU's output gradient and the ReLU's
// backward is skipped; a flatten between them stops it. Covers a spatial batch norm and one over
// dense features, whose ReLU is followed by a dense layer (the batch norm's fold wins over the
// dense layer's).
TEST(Network, ReluFoldedIntoBatchNormGivesTheUnfoldedNumbers) {
  const LayerSpec relu = layer("relu"), flat = layer("flatten"), bn = layer("batchnorm");
  const LayerSpec conv = layer("conv", {{"filters", 4}, {"kernel", 3}});
  const auto dense = [](int units) { return layer("dense", {{"units", units}}); };
  expect_fold_changes_nothing(custom({conv, bn, relu, flat, dense(6), bn, relu, dense(5)}),
                              custom({conv, bn, flat, relu, dense(6), bn, flat, relu, dense(5)}),
                              Shape{2, 6, 6}, 8);
}

// A convolution followed by a 2x2 max pooling computes the pooling itself (Conv2d::
// fuse_maxpool_after: the pooling's forward skipped, its backward reading the argmax the
// convolution kept); a dropout of rate 0 (a copy both ways) between them stops it. Two pairs, the
// second pooling a 3x3 output (its trailing row and column get zero gradient).
TEST(Network, MaxPoolingDoneByItsConvolutionGivesTheUnfusedNumbers) {
  const LayerSpec pool = layer("maxpool", {{"size", 2}}), copy = layer("dropout", {{"rate", 0}});
  const auto conv = [](int filters, int kernel) {
    return layer("conv", {{"filters", filters}, {"kernel", kernel}});
  };
  const LayerSpec dense = layer("dense", {{"units", 5}});
  expect_fold_changes_nothing(custom({conv(4, 5), pool, conv(6, 3), pool, dense}),
                              custom({conv(4, 5), copy, pool, conv(6, 3), copy, pool, dense}),
                              Shape{1, 14, 14}, 9, false);
}

// Two trials in two CPU slots: each has its own backend (and arena) and runs at the same time as
// the other; both must get exactly what a trial running alone gets.
TEST(Network, TwoBackendsTrainingAtOnceMatchOneAlone) {
  const int batch = 16;
  std::mt19937_64 rng(9);
  const auto x = to_float(random_vector(std::size_t(batch) * 784, rng));
  std::vector<std::int32_t> labels(batch);
  for (auto& l : labels) l = static_cast<std::int32_t>(rng() % 10);
  auto train_three_steps = [&](int threads) {
    CpuBackend cpu(threads);
    Network net(cpu, preset("lenet"), Shape{1, 28, 28}, 10, batch, 5);
    std::vector<float> dlogits(batch * 10), velocity(net.param_count(), 0.f);
    OptimizerStep step;
    for (int s = 0; s < 3; ++s) {
      double stats[2] = {0, 0};
      const float* logits = net.forward(x.data(), batch, true);
      cpu.softmax_cross_entropy(logits, labels.data(), batch, 10, dlogits.data(), stats);
      net.backward(dlogits.data(), batch);
      cpu.optimizer_step(step, net.params(), net.grads(), velocity.data(), nullptr,
                         net.param_count(), nullptr);
    }
    return std::vector<float>(net.params(), net.params() + net.param_count());
  };
  const auto alone = train_three_steps(1);
  std::vector<float> first, second;
  std::thread a([&] { first = train_three_steps(1); });
  std::thread b([&] { second = train_three_steps(2); });
  a.join();
  b.join();
  EXPECT_EQ(first, alone);
  EXPECT_EQ(second, alone);  // and the thread count does not change a single bit
}

}  // namespace
}  // namespace sweep::trainer
