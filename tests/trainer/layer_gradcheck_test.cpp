/*
 * layer_gradcheck_test.cpp — every layer's backward proven against finite differences.
 *
 * Each check runs in double on the reference ops: L = sum(y * r) for a fixed random r, analytic
 * gradients from the reference backward against central differences of the reference forward, for
 * the input and every parameter. test_cpu_*.cpp then pins the float CPU backend to those same
 * reference backwards, and layer_cpu_test.cpp pins each Layer object to them.
 */
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "gradcheck.h"
#include "op_geometry.h"
#include "reference_ops.h"

namespace sweep::trainer {
namespace {

using testing::conv_geom;
using testing::gradient_matches;
using testing::numeric_gradient;
using testing::random_vector;
using testing::weighted_sum;

class ConvGradient : public ::testing::TestWithParam<ConvGeom> {};

TEST_P(ConvGradient, InputWeightAndBias) {
  const ConvGeom g = GetParam();
  std::mt19937_64 rng(100 + g.h);
  auto x = random_vector(std::size_t(g.n) * g.c * g.h * g.w, rng);
  auto w = random_vector(std::size_t(g.k) * g.c * g.r * g.s, rng);
  auto b = random_vector(g.k, rng);
  const auto r = random_vector(std::size_t(g.n) * g.k * g.out_h * g.out_w, rng);
  std::vector<double> y(r.size());
  auto loss = [&] {
    ref::conv2d_forward(g, x.data(), w.data(), b.data(), y.data());
    return weighted_sum(y, r);
  };
  std::vector<double> dx(x.size()), dw(w.size()), db(b.size());
  ref::conv2d_backward(g, x.data(), w.data(), r.data(), dx.data(), dw.data(), db.data());
  EXPECT_TRUE(gradient_matches(dx, numeric_gradient(loss, x)));
  EXPECT_TRUE(gradient_matches(dw, numeric_gradient(loss, w)));
  EXPECT_TRUE(gradient_matches(db, numeric_gradient(loss, b)));
}

INSTANTIATE_TEST_SUITE_P(Geometries, ConvGradient,
                         ::testing::Values(conv_geom(2, 2, 5, 5, 3, 3, 3, 1, 0),
                                           conv_geom(2, 2, 6, 5, 2, 3, 3, 2, 1),
                                           conv_geom(1, 3, 4, 4, 2, 3, 3, 1, 1),
                                           conv_geom(2, 3, 3, 3, 2, 1, 1, 1, 0)));

TEST(LayerGradient, Dense) {
  const int n = 3, in = 5, out = 4;
  std::mt19937_64 rng(1);
  auto x = random_vector(n * in, rng), w = random_vector(out * in, rng),
       b = random_vector(out, rng);
  const auto r = random_vector(n * out, rng);
  std::vector<double> y(r.size());
  auto loss = [&] {
    ref::dense_forward(x.data(), w.data(), b.data(), y.data(), n, in, out);
    return weighted_sum(y, r);
  };
  std::vector<double> dx(x.size()), dw(w.size()), db(b.size());
  ref::dense_backward(x.data(), w.data(), r.data(), dx.data(), dw.data(), db.data(), n, in, out);
  EXPECT_TRUE(gradient_matches(dx, numeric_gradient(loss, x)));
  EXPECT_TRUE(gradient_matches(dw, numeric_gradient(loss, w)));
  EXPECT_TRUE(gradient_matches(db, numeric_gradient(loss, b)));
}

class PoolGradient : public ::testing::TestWithParam<std::tuple<PoolMode, int, int, int>> {};

TEST_P(PoolGradient, Input) {
  const auto [mode, k, stride, pad] = GetParam();
  const int h = 7, w = 6;
  const PoolGeom g{2,
                   2,
                   h,
                   w,
                   k,
                   k,
                   stride,
                   stride,
                   pad,
                   pad,
                   (h + 2 * pad - k) / stride + 1,
                   (w + 2 * pad - k) / stride + 1};
  std::mt19937_64 rng(3);
  auto x = random_vector(std::size_t(g.n) * g.c * h * w, rng);  // distinct values: no ties
  const auto r = random_vector(std::size_t(g.n) * g.c * g.out_h * g.out_w, rng);
  std::vector<double> y(r.size()), dx(x.size());
  auto loss = [&] {
    ref::pool_forward(g, mode, x.data(), y.data());
    return weighted_sum(y, r);
  };
  loss();
  ref::pool_backward(g, mode, x.data(), y.data(), r.data(), dx.data());
  EXPECT_TRUE(gradient_matches(dx, numeric_gradient(loss, x)));
}

INSTANTIATE_TEST_SUITE_P(Modes, PoolGradient,
                         ::testing::Combine(::testing::Values(PoolMode::max, PoolMode::average),
                                            ::testing::Values(2, 3), ::testing::Values(1, 2),
                                            ::testing::Values(0, 1)));

TEST(LayerGradient, GlobalAveragePool) {
  const PoolGeom g{2, 3, 4, 5, 4, 5, 4, 5, 0, 0, 1, 1};
  std::mt19937_64 rng(4);
  auto x = random_vector(2 * 3 * 4 * 5, rng);
  const auto r = random_vector(2 * 3, rng);
  std::vector<double> y(r.size()), dx(x.size());
  auto loss = [&] {
    ref::pool_forward(g, PoolMode::average, x.data(), y.data());
    return weighted_sum(y, r);
  };
  loss();
  ref::pool_backward(g, PoolMode::average, x.data(), y.data(), r.data(), dx.data());
  EXPECT_TRUE(gradient_matches(dx, numeric_gradient(loss, x)));
}

TEST(LayerGradient, Relu) {
  std::mt19937_64 rng(5);
  auto x = random_vector(50, rng);
  for (auto& v : x)
    if (std::fabs(v) < 1e-3) v = 0.5;  // keep finite differences off the kink
  const auto r = random_vector(50, rng);
  std::vector<double> y(50), dx(50);
  auto loss = [&] {
    ref::relu_forward(x.data(), y.data(), x.size());
    return weighted_sum(y, r);
  };
  loss();
  ref::relu_backward(y.data(), r.data(), dx.data(), x.size());
  EXPECT_TRUE(gradient_matches(dx, numeric_gradient(loss, x)));
}

TEST(LayerGradient, DropoutIsLinearInItsMask) {
  std::mt19937_64 rng(6);
  auto x = random_vector(64, rng);
  const auto r = random_vector(64, rng);
  std::vector<double> y(64), mask(64);
  auto loss = [&] {
    ref::dropout_forward(x.data(), y.data(), mask.data(), x.size(), 0.4f, 5, 0);
    return weighted_sum(y, r);
  };
  loss();
  std::vector<double> dx(64);
  for (std::size_t i = 0; i < 64; ++i) dx[i] = r[i] * mask[i];  // backward = dy * mask
  EXPECT_TRUE(gradient_matches(dx, numeric_gradient(loss, x)));
}

class BatchNormGradient : public ::testing::TestWithParam<BatchNormGeom> {};

TEST_P(BatchNormGradient, TrainingModeInputGammaBeta) {
  const BatchNormGeom g = GetParam();
  std::mt19937_64 rng(7);
  const std::size_t xs = std::size_t(g.n) * g.c * g.hw;
  auto x = random_vector(xs, rng, -2, 3);
  auto gamma = random_vector(g.c, rng, 0.5, 1.5), beta = random_vector(g.c, rng);
  const auto r = random_vector(xs, rng);
  std::vector<double> y(xs), mean(g.c), invstd(g.c);
  auto loss = [&] {  // batch statistics are recomputed at every perturbed point
    ref::batchnorm_forward_train<double>(g, x.data(), gamma.data(), beta.data(), nullptr, nullptr,
                                         mean.data(), invstd.data(), y.data());
    return weighted_sum(y, r);
  };
  loss();
  std::vector<double> dx(xs), dgamma(g.c), dbeta(g.c);
  ref::batchnorm_backward(g, x.data(), r.data(), gamma.data(), mean.data(), invstd.data(),
                          dx.data(), dgamma.data(), dbeta.data());
  EXPECT_TRUE(gradient_matches(dx, numeric_gradient(loss, x)));
  EXPECT_TRUE(gradient_matches(dgamma, numeric_gradient(loss, gamma)));
  EXPECT_TRUE(gradient_matches(dbeta, numeric_gradient(loss, beta)));
}

INSTANTIATE_TEST_SUITE_P(Shapes, BatchNormGradient,
                         ::testing::Values(BatchNormGeom{3, 2, 5, 1e-5f, 0.1f},
                                           BatchNormGeom{4, 3, 1, 1e-5f, 0.1f},
                                           BatchNormGeom{1, 2, 6, 1e-5f, 0.1f}));

TEST(LayerGradient, SoftmaxCrossEntropy) {
  const int n = 4, classes = 5;
  std::mt19937_64 rng(8);
  auto logits = random_vector(n * classes, rng, -3, 3);
  const std::vector<std::int32_t> labels = {0, 4, 2, 2};
  auto loss = [&] {
    return ref::softmax_cross_entropy<double>(logits.data(), labels.data(), n, classes, nullptr);
  };
  std::vector<double> d(logits.size());
  ref::softmax_cross_entropy(logits.data(), labels.data(), n, classes, d.data());
  EXPECT_TRUE(gradient_matches(d, numeric_gradient(loss, logits)));
}

}  // namespace
}  // namespace sweep::trainer
