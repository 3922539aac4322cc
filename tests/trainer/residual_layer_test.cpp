/*
 * residual_layer_test.cpp — the residual block proven as the other layers are: its double reference
 * (reference_residual.h) against finite differences, for the input and every parameter; then the
 * Residual layer on the CPU backend against that reference, which pins the parameter and state
 * layout (F's layers, then the projection), the shortcut's choice and stride, the sum's backward
 * (dy routed to both branches, their dx summed), and the skipped dx of a first layer.
 */
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "common/check.h"
#include "gradcheck.h"
#include "reference_residual.h"
#include "trainer/cpu/cpu_backend.h"
#include "trainer/layers/residual.h"
#include "trainer/models.h"

namespace sweep::trainer {
namespace {

using testing::all_close;
using testing::float_rounded;
using testing::gradient_matches;
using testing::numeric_gradient;
using testing::random_vector;
using testing::to_double;
using testing::to_float;
using testing::weighted_sum;

LayerSpec conv(int filters, int stride, int pad, bool bias) {
  return LayerSpec{LayerKind::conv,
                   {{"filters", filters},
                    {"kernel", 3},
                    {"stride", stride},
                    {"padding", pad},
                    {"bias", bias ? 1 : 0}},
                   {}};
}
LayerSpec plain(LayerKind kind) { return LayerSpec{kind, {}, {}}; }

// One block four ways: the YAML-side spec, and the reference written out by hand.
struct BlockCase {
  std::string name;
  Shape in;
  std::vector<LayerSpec> layers;
  bool relu;
  int projection_stride;  // 0: identity
  std::vector<ref::RefLayer> reference;
};

std::vector<BlockCase> cases() {
  using ref::bn_layer;
  using ref::conv_layer;
  using ref::relu_layer;
  const Shape a{3, 5, 5}, b{2, 6, 5}, b2{4, 3, 3}, c{2, 4, 4}, d{3, 4, 4};
  return {
      {"identity",
       a,
       {conv(3, 1, 1, false), plain(LayerKind::batchnorm), plain(LayerKind::relu),
        conv(3, 1, 1, false), plain(LayerKind::batchnorm)},
       true,
       0,
       {conv_layer(a, 3, 3, 1, 1, false), bn_layer(a), relu_layer(a),
        conv_layer(a, 3, 3, 1, 1, false), bn_layer(a)}},
      {"projection_stride2",
       b,
       {conv(4, 2, 1, false), plain(LayerKind::batchnorm), plain(LayerKind::relu),
        conv(4, 1, 1, false), plain(LayerKind::batchnorm)},
       true,
       2,
       {conv_layer(b, 4, 3, 2, 1, false), bn_layer(b2), relu_layer(b2),
        conv_layer(b2, 4, 3, 1, 1, false), bn_layer(b2)}},
      {"identity_no_activation_conv_bias",
       c,
       {conv(2, 1, 1, true)},
       false,
       0,
       {conv_layer(c, 2, 3, 1, 1, true)}},
      {"projection_channels_only",
       c,
       {conv(3, 1, 1, true), plain(LayerKind::relu)},
       true,
       1,
       {conv_layer(c, 3, 3, 1, 1, true), relu_layer(d)}},
  };
}

void PrintTo(const BlockCase& c, std::ostream* os) { *os << c.name; }

class ResidualBlock : public ::testing::TestWithParam<BlockCase> {};

TEST_P(ResidualBlock, ReferenceGradientsMatchFiniteDifferences) {
  const BlockCase& bc = GetParam();
  ref::RefBlock<double> block(bc.reference, bc.projection_stride, bc.relu);
  const int n = 3;
  std::mt19937_64 rng(21);
  auto x = random_vector(std::size_t(n) * bc.in.numel(), rng, -2, 2);
  auto p = random_vector(block.params(), rng, -0.6, 0.6);
  const auto r = random_vector(std::size_t(n) * block.out().numel(), rng);
  std::vector<double> y(r.size());
  auto loss = [&] {
    block.forward(n, x.data(), p.data(), nullptr, y.data());
    return weighted_sum(y, r);
  };
  loss();
  std::vector<double> dx(x.size()), dp(p.size());
  block.backward(n, p.data(), r.data(), dx.data(), dp.data());
  EXPECT_TRUE(gradient_matches(dx, numeric_gradient(loss, x))) << "input";
  EXPECT_TRUE(gradient_matches(dp, numeric_gradient(loss, p))) << "parameters";
}

TEST_P(ResidualBlock, CpuLayerMatchesTheReference) {
  const BlockCase& bc = GetParam();
  ref::RefBlock<double> block(bc.reference, bc.projection_stride, bc.relu);
  LayerSpec spec{LayerKind::residual, {}, {{"activation", bc.relu ? "relu" : "none"}}, bc.layers};
  ModelSpec model;
  model.preset = Preset::none;
  model.layers = {spec};
  auto layers = build_layers(model, 10);
  auto& residual = dynamic_cast<Residual&>(*layers.front());

  const int n = 4;
  EXPECT_EQ(residual.setup(bc.in), block.out());
  EXPECT_EQ(residual.param_count(), block.params());
  EXPECT_EQ(residual.state_count(), block.states());
  EXPECT_EQ(residual.has_projection(), bc.projection_stride > 0);
  if (bc.projection_stride) {
    EXPECT_EQ(residual.projection_stride(), bc.projection_stride);
  }

  std::mt19937_64 rng(22);
  const auto p = float_rounded(random_vector(block.params(), rng, -0.6, 0.6));
  const auto x = float_rounded(random_vector(std::size_t(n) * bc.in.numel(), rng, -2, 2));
  const auto dy = float_rounded(random_vector(std::size_t(n) * block.out().numel(), rng));
  // The layer's initial state (every batch norm's running mean 0, variance 1), in its layout.
  std::vector<float> initial_params(block.params()), initial_state(block.states());
  residual.init(rng, initial_params.data(), initial_state.data());
  const std::vector<double> state_start = to_double(initial_state);
  std::vector<double> state_ref = state_start;
  std::vector<double> y_ref(dy.size()), dx_ref(x.size()), dp_ref(p.size());
  block.forward(n, x.data(), p.data(), state_ref.data(), y_ref.data());
  block.backward(n, p.data(), dy.data(), dx_ref.data(), dp_ref.data());

  CpuBackend cpu(2);
  auto params = to_float(p);
  std::vector<float> grads(params.size(), 99.f), state(to_float(state_start));
  residual.bind(cpu, params.data(), grads.data(), state.data(), n);
  const auto xf = to_float(x), dyf = to_float(dy);
  std::vector<float> y(dy.size()), dx(x.size(), 99.f);
  residual.forward(xf.data(), y.data(), n, true);
  residual.backward(xf.data(), y.data(), dyf.data(), dx.data(), n);
  EXPECT_TRUE(all_close(y, y_ref, 1e-4, 1e-4)) << "output";
  EXPECT_TRUE(all_close(dx, dx_ref, 1e-4, 1e-3)) << "input gradient";
  EXPECT_TRUE(all_close(grads, dp_ref, 1e-4, 1e-3)) << "parameter gradients, in the layout";
  EXPECT_TRUE(all_close(state, state_ref, 1e-5, 1e-4)) << "running statistics, in the layout";

  // As a network's first trainable layer, nothing needs its dx: the same parameter gradients.
  std::fill(grads.begin(), grads.end(), 99.f);
  residual.forward(xf.data(), y.data(), n, true);
  residual.backward(xf.data(), y.data(), dyf.data(), nullptr, n);
  EXPECT_TRUE(all_close(grads, dp_ref, 1e-4, 1e-3)) << "parameter gradients without dx";
}

INSTANTIATE_TEST_SUITE_P(Blocks, ResidualBlock, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<BlockCase>& p) { return p.param.name; });

TEST(Residual, ShortcutIsChosenFromTheShapes) {
  auto block = [](std::vector<LayerSpec> inner, Shape in) {
    ModelSpec model;
    model.preset = Preset::none;
    model.layers = {LayerSpec{LayerKind::residual, {}, {}, std::move(inner)}};
    auto layers = build_layers(model, 10);
    auto residual = std::move(layers.front());
    residual->setup(in);
    return residual;
  };
  // An odd size halves as a stride-2, pad-1 convolution does: 7 -> 4, and so does the shortcut.
  auto odd = block({conv(8, 2, 1, false)}, Shape{4, 7, 7});
  EXPECT_EQ(odd->out_shape(), (Shape{8, 4, 4}));
  EXPECT_EQ(dynamic_cast<Residual&>(*odd).projection_stride(), 2);
  EXPECT_EQ(odd->param_count(), 8u * 4 * 9 + 8u * 4 + 2 * 8);
  EXPECT_EQ(odd->state_count(), 2u * 8);
  auto same = block({conv(4, 1, 1, false), plain(LayerKind::relu)}, Shape{4, 7, 7});
  EXPECT_FALSE(dynamic_cast<Residual&>(*same).has_projection());
  EXPECT_EQ(same->param_count(), 4u * 4 * 9);
  try {
    block({conv(4, 1, 2, false)}, Shape{4, 7, 7});  // grows 7x7 -> 9x9
    ADD_FAILURE() << "a block that grows its input was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("turn 4x7x7 into 4x9x9, which no 1x1 shortcut"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace sweep::trainer
