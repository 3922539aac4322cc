/*
 * resnet_test.cpp — residual blocks in a Network and preset resnet: the presets' shapes and
 * parameter counts (ResNet-20 with option-B shortcuts; ResNet-18/34's CIFAR variant against the
 * counts every PyTorch CIFAR implementation prints), the accepted depths, errors that name the
 * block and the layer inside it, summary() rows for a block's layers and shortcut, a float
 * end-to-end gradient check through blocks, dropout inside a block, and a short CPU training run.
 */
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "common/check.h"
#include "dropout_steps.h"
#include "gradcheck.h"
#include "network_gradcheck.h"
#include "trainer/cpu/cpu_backend.h"
#include "trainer/layers/layer.h"
#include "trainer/layers/residual.h"
#include "trainer/models.h"
#include "trainer/network.h"
#include "trainer/train.h"

namespace sweep::trainer {
namespace {

using testing::random_vector;
using testing::to_float;

ModelSpec resnet(int depth, int width = 1) {
  ModelSpec m;
  m.preset = Preset::resnet;
  m.depth = depth;
  m.width = width;
  return m;
}

LayerSpec layer(LayerKind kind, std::map<std::string, double> num = {},
                std::map<std::string, std::string> str = {}) {
  return LayerSpec{kind, std::move(num), std::move(str)};
}
LayerSpec conv(int filters, int stride = 1, int pad = 1) {
  return layer(LayerKind::conv,
               {{"filters", filters}, {"kernel", 3}, {"stride", stride}, {"padding", pad}});
}
LayerSpec block(std::vector<LayerSpec> inner, const std::string& activation = "relu") {
  LayerSpec b = layer(LayerKind::residual, {}, {{"activation", activation}});
  b.layers = std::move(inner);
  return b;
}
ModelSpec custom(std::vector<LayerSpec> layers) {
  ModelSpec m;
  m.preset = Preset::none;
  m.layers = std::move(layers);
  return m;
}

std::string error_of(const ModelSpec& m, Shape in) {
  try {
    check_model(m, in, 10);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// Weights of a 3x3 conv without bias plus its batch norm.
std::size_t conv_bn(std::size_t c_in, std::size_t c_out) { return c_in * c_out * 9 + 2 * c_out; }
// A basic block: two conv-bn pairs, and the projection (1x1 conv + bn) when the shape changes.
std::size_t basic(std::size_t c_in, std::size_t c_out) {
  return conv_bn(c_in, c_out) + conv_bn(c_out, c_out) +
         (c_in != c_out ? c_in * c_out + 2 * c_out : 0);
}

TEST(ResNet, Depth20IsTheCifarResNetWithProjectionShortcuts) {
  CpuBackend cpu(1);
  Network net(cpu, resnet(20), Shape{3, 32, 32}, 10, 2, 1);
  // stem, 3 stages of 3 blocks (16, 32, 64), gap, dense
  const std::size_t expected = conv_bn(3, 16) + 3 * basic(16, 16) + basic(16, 32) +
                               2 * basic(32, 32) + basic(32, 64) + 2 * basic(64, 64) + 64 * 10 + 10;
  EXPECT_EQ(expected, 272474u);  // 269,722 with the paper's option-A (parameter-free) shortcuts
  EXPECT_EQ(net.param_count(), expected);
  const auto& layers = net.layers();
  ASSERT_EQ(layers.size(), 3u + 9 + 2);
  int projections = 0;
  for (const auto& l : layers)
    if (l->kind() == LayerKind::residual && dynamic_cast<Residual&>(*l).has_projection()) {
      ++projections;
      EXPECT_EQ(dynamic_cast<Residual&>(*l).projection_stride(), 2);
    }
  EXPECT_EQ(projections, 2);
  EXPECT_EQ(layers[3]->out_shape(), (Shape{16, 32, 32}));
  EXPECT_EQ(layers[6]->out_shape(), (Shape{32, 16, 16}));
  EXPECT_EQ(layers[9]->out_shape(), (Shape{64, 8, 8}));
  EXPECT_EQ(layers[12]->out_shape(), (Shape{64, 1, 1}));

  const std::string summary = net.summary();
  for (const char* row :
       {"residual block, relu after the sum", "    conv 32@3x3 stride 2 pad 1 no-bias",
        "    shortcut conv 32@1x1 stride 2 no-bias", "    shortcut batchnorm",
        "    shortcut identity", "total parameters: 272474"})
    EXPECT_NE(summary.find(row), std::string::npos) << row << " not in\n" << summary;
}

TEST(ResNet, Depth18And34AreTheCifarVariantsOfResNet18And34) {
  // The counts of the usual PyTorch CIFAR ResNet-18/34 (3x3 stem, no max-pool, 10 classes).
  EXPECT_EQ(check_model(resnet(18), Shape{3, 32, 32}, 10), 11173962u);
  EXPECT_EQ(check_model(resnet(34), Shape{3, 32, 32}, 10), 21282122u);
  const auto layers = build_layers(resnet(18), 10);
  const auto shapes = setup_layers(layers, Shape{3, 32, 32});
  EXPECT_EQ(layers.size(), 3u + 8 + 2);
  EXPECT_EQ(shapes[1], (Shape{64, 32, 32}));  // the stem: no stride, no max-pool
  EXPECT_EQ(shapes[shapes.size() - 2], (Shape{512, 1, 1}));
}

TEST(ResNet, WidthMultipliesEveryStagesChannels) {
  const auto layers = build_layers(resnet(8, 2), 10);
  const auto shapes = setup_layers(layers, Shape{1, 28, 28});
  EXPECT_EQ(shapes[1], (Shape{32, 28, 28}));
  EXPECT_EQ(shapes[4], (Shape{32, 28, 28}));
  EXPECT_EQ(shapes[5], (Shape{64, 14, 14}));
  EXPECT_EQ(shapes[6], (Shape{128, 7, 7}));  // 28 -> 14 -> 7
  EXPECT_EQ(check_model(resnet(8, 2), Shape{1, 28, 28}, 10),
            9u * 32 + 2 * 32 + basic(32, 32) + basic(32, 64) + basic(64, 128) + 128 * 10 + 10);
}

TEST(ResNet, OnlyItsDepthsAreAccepted) {
  for (int depth : {8, 14, 20, 32, 44, 56, 110, 1202, 18, 34}) EXPECT_TRUE(is_resnet_depth(depth));
  for (int depth : {0, 2, 7, 19, 21, 22, 36, 51, 1208}) EXPECT_FALSE(is_resnet_depth(depth));
  EXPECT_NE(error_of(resnet(21), Shape{1, 28, 28})
                .find("preset resnet has no depth 21; it builds 6n+2 from 8 to 1202 (CIFAR "
                      "ResNets: 20, 32, 44, 56, 110, ...) or 18, 34"),
            std::string::npos)
      << error_of(resnet(21), Shape{1, 28, 28});
  EXPECT_NE(error_of(resnet(20, 0), Shape{1, 28, 28}).find("model.width must be between 1 and 64"),
            std::string::npos);
}

TEST(ResNet, ErrorsNameTheBlockAndTheLayerInsideIt) {
  EXPECT_NE(error_of(custom({block({layer(LayerKind::conv, {{"filters", 4}})})}), Shape{1, 8, 8})
                .find("model layer 1 of 2 (residual): block layer 1 of 1 (conv): missing "
                      "required argument 'kernel'"),
            std::string::npos);
  EXPECT_NE(error_of(custom({block({})}), Shape{1, 8, 8})
                .find("model layer 1 of 2 (residual): missing required argument 'layers'"),
            std::string::npos);
  EXPECT_NE(error_of(custom({layer(LayerKind::maxpool, {{"size", 4}}),
                             block({layer(LayerKind::relu), conv(2, 1, 0)})}),
                     Shape{1, 8, 8})
                .find("model layer 2 of 3 (residual): block layer 2 of 2 (conv): kernel 3x3 is "
                      "larger than its input 2x2"),
            std::string::npos);
  EXPECT_NE(error_of(custom({block({conv(4)}, "tanh")}), Shape{1, 8, 8})
                .find("argument 'activation' must be one of relu, none, got 'tanh'"),
            std::string::npos);
  LayerSpec conv_with_layers = conv(4);
  conv_with_layers.layers = {layer(LayerKind::relu)};
  EXPECT_NE(error_of(custom({conv_with_layers}), Shape{1, 8, 8}).find("takes no list of layers"),
            std::string::npos);
  EXPECT_NE(error_of(custom({block({conv(4, 1, 3)})}), Shape{1, 8, 8})
                .find("its layers turn 1x8x8 into 4x12x12, which no 1x1 shortcut"),
            std::string::npos);
}

// A block as the first layer (nothing needs its dx), a block with a projection, a block inside a
// block, one without activation: d(loss)/d(param) from backward against central differences of
// the float loss, for every third parameter.
TEST(ResNet, NetworkGradientThroughBlocksMatchesFiniteDifferences) {
  CpuBackend cpu(1);
  const ModelSpec m =
      custom({block({conv(3), layer(LayerKind::batchnorm), layer(LayerKind::relu), conv(3)}),
              block({conv(4, 2, 1), layer(LayerKind::batchnorm),
                     block({conv(4), layer(LayerKind::batchnorm)}, "none")}),
              layer(LayerKind::gap), layer(LayerKind::dense, {{"units", 4}})});
  const int batch = 3, classes = 4;
  Network net(cpu, m, Shape{3, 6, 6}, classes, batch, 3);
  std::mt19937_64 rng(4);
  const auto x = to_float(random_vector(std::size_t(batch) * 3 * 36, rng));
  const std::vector<std::int32_t> labels = {0, 3, 1};
  // h = 1e-3: batch norm over a batch of 3 bends the loss enough that 1e-2 leaves a truncation
  // error of up to 10%; at 1e-3 the worst parameter is within a fifth of the tolerance.
  EXPECT_GT(testing::expect_network_gradient_matches(cpu, net, x, labels, classes, 3, 1e-3f), 100u);
}

TEST(ResNet, DropoutInsideABlockDrawsPerStepAndIsSeenByTheLoop) {
  CpuBackend cpu(1);
  const ModelSpec m = custom({layer(LayerKind::conv, {{"filters", 4}, {"kernel", 1}}),
                              block({conv(4), layer(LayerKind::dropout, {{"rate", 0.5}})})});
  Network net(cpu, m, Shape{2, 4, 4}, 3, 2, 1);
  EXPECT_TRUE(net.layers()[1]->contains(LayerKind::dropout));  // train(): no CUDA graph
  EXPECT_FALSE(net.layers()[0]->contains(LayerKind::dropout));
  std::mt19937_64 rng(2);
  const auto x = to_float(random_vector(2 * 32, rng));
  testing::expect_dropout_follows_the_step(net, x, 2, 6);
}

// The CPU smoke run: ResNet-20 on small synthetic images learns within a few dozen steps.
// The CPU backend is the reference the CUDA backend is compared with: with many threads its
// training step must give the same numbers every run (checked when a GPU comparison of ResNet-8
// failed about one run in ten on a 16-core machine; the cause was a ReLU on the edge of zero,
// tests/trainer/cuda/cuda_residual_test.cpp, but a reference that varied would look the same).
TEST(ResNet, CpuStepIsTheSameEveryRunWithManyThreads) {
  const int batch = 16, classes = 10;
  const Shape in{3, 16, 16};
  std::mt19937_64 rng(5);
  const auto x = to_float(random_vector(std::size_t(batch) * std::size_t(in.numel()), rng));
  const auto d = to_float(random_vector(std::size_t(batch) * classes, rng));
  std::vector<float> first, first_logits;
  for (int run = 0; run < 12; ++run) {
    CpuBackend cpu(8);
    Network net(cpu, resnet(8), in, classes, batch, 5);
    const float* logits = net.forward(x.data(), batch, true);
    const std::vector<float> l(logits, logits + batch * classes);
    net.backward(d.data(), batch);
    const std::vector<float> g(net.grads(), net.grads() + net.param_count());
    if (run == 0) {
      first = g;
      first_logits = l;
      continue;
    }
    ASSERT_EQ(l, first_logits) << "run " << run << ": logits";
    std::size_t differ = 0, at = 0;
    for (std::size_t i = 0; i < g.size(); ++i)
      if (g[i] != first[i] && differ++ == 0) at = i;
    ASSERT_EQ(differ, 0u) << "run " << run << ": " << differ << " gradients differ, the first at "
                          << at << " (" << first[at] << " then " << g[at] << ")";
  }
}

TEST(ResNet, Depth20TrainsOnTheCpu) {
  TrainConfig c;
  c.data.dataset = DatasetKind::synthetic;
  c.data.synthetic.train_size = 512;
  c.data.synthetic.test_size = 256;
  c.data.synthetic.height = 16;
  c.data.synthetic.width = 16;
  c.model = resnet(20);
  c.training.learning_rate = 0.05;
  c.training.weight_decay = 5e-4;
  c.training.batch_size = 32;
  c.training.epochs = 2;  // 32 steps
  c.training.log_every = 4;
  c.training.seed = 3;
  c.device = DeviceSpec{DeviceKind::cpu, 0, 2};
  struct Losses : TrainCallback {
    std::vector<double> train;
    bool on_iteration(const IterationInfo& i) override {
      if (i.has_loss) train.push_back(i.train_loss);
      return true;
    }
  } losses;
  const TrainResult r = train(c, losses);
  ASSERT_EQ(r.state, RunState::completed) << r.message;
  ASSERT_EQ(losses.train.size(), 8u);
  const double first = losses.train.front(), last = losses.train.back();
  EXPECT_TRUE(std::isfinite(last));
  EXPECT_LT(last, 0.5 * first) << "logged losses: " << ::testing::PrintToString(losses.train);
  EXPECT_GT(r.final_val_accuracy, 0.3);  // 10 classes: chance is 0.1
}

}  // namespace
}  // namespace sweep::trainer
