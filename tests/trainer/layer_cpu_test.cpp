/*
 * layer_cpu_test.cpp — each Layer object on the CPU backend against the double references: the
 * layer's parameter layout (weight then bias, PyTorch layouts), its shape rules, initial values,
 * and that forward/backward call the right ops with the right pointers.
 */
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "common/check.h"
#include "gradcheck.h"
#include "reference_ops.h"
#include "trainer/cpu/cpu_backend.h"
#include "trainer/layers/activation.h"
#include "trainer/layers/batchnorm.h"
#include "trainer/layers/conv2d.h"
#include "trainer/layers/dense.h"
#include "trainer/layers/pool.h"

namespace sweep::trainer {
namespace {

using testing::all_close;
using testing::float_rounded;
using testing::random_vector;
using testing::to_double;
using testing::to_float;

// A layer bound to host buffers of a CPU backend, with random parameters.
struct Bound {
  CpuBackend cpu{2};
  std::vector<float> params, grads, state;
  Shape out;
  Bound(Layer& layer, Shape in, int max_batch, std::mt19937_64& rng) {
    out = layer.setup(in);
    params = to_float(random_vector(layer.param_count(), rng, -0.5, 0.5));
    grads.assign(layer.param_count(), 99.f);
    state.assign(layer.state_count(), 0.f);
    layer.bind(cpu, params.data(), grads.data(), state.data(), max_batch);
  }
};

TEST(LayerCpu, Conv2dLayoutIsWeightThenBias) {
  Conv2dOptions o;
  o.filters = 4;
  o.kernel = 3;
  o.stride = 2;
  o.padding = 1;
  Conv2d conv(o);
  std::mt19937_64 rng(1);
  const Shape in{3, 9, 8};
  Bound b(conv, in, 2, rng);
  EXPECT_EQ(b.out, (Shape{4, 5, 4}));
  EXPECT_EQ(conv.param_count(), 4u * 3 * 9 + 4);
  const ConvGeom g = conv.geometry(2);
  const auto x = float_rounded(random_vector(2 * in.numel(), rng));
  const auto dy = float_rounded(random_vector(2 * b.out.numel(), rng));
  const auto p = to_double(b.params);
  std::vector<double> y_ref(dy.size()), dx_ref(x.size()), dw_ref(4 * 27), db_ref(4);
  ref::conv2d_forward(g, x.data(), p.data(), p.data() + 108, y_ref.data());
  ref::conv2d_backward(g, x.data(), p.data(), dy.data(), dx_ref.data(), dw_ref.data(),
                       db_ref.data());
  const auto xf = to_float(x), dyf = to_float(dy);
  std::vector<float> y(dy.size()), dx(x.size());
  conv.forward(xf.data(), y.data(), 2, true);
  conv.backward(xf.data(), y.data(), dyf.data(), dx.data(), 2);
  EXPECT_TRUE(all_close(y, y_ref, 1e-5, 1e-4));
  EXPECT_TRUE(all_close(dx, dx_ref, 1e-5, 1e-4));
  EXPECT_TRUE(all_close(b.grads.data(), dw_ref.data(), 108, 1e-5, 1e-4));
  EXPECT_TRUE(all_close(b.grads.data() + 108, db_ref.data(), 4, 1e-5, 1e-4));
}

TEST(LayerCpu, Conv2dShapeRules) {
  Conv2dOptions same;
  same.filters = 2;
  same.kernel = 5;
  same.same = true;
  EXPECT_EQ(Conv2d(same).setup(Shape{1, 7, 6}), (Shape{2, 7, 6}));
  same.kernel = 4;
  EXPECT_THROW(Conv2d(same).setup(Shape{1, 7, 6}), Error);  // even kernel with same
  same.kernel = 3;
  same.stride = 2;
  EXPECT_THROW(Conv2d(same).setup(Shape{1, 7, 6}), Error);  // same needs stride 1
  Conv2dOptions big;
  big.kernel = 5;
  EXPECT_THROW(Conv2d(big).setup(Shape{1, 4, 9}), Error);
  big.padding = 1;  // 4 + 2 = 6 >= 5
  EXPECT_EQ(Conv2d(big).setup(Shape{1, 4, 9}), (Shape{1, 2, 7}));
  Conv2dOptions no_bias;
  no_bias.filters = 3;
  no_bias.bias = false;
  Conv2d c(no_bias);
  c.setup(Shape{2, 5, 5});
  EXPECT_EQ(c.param_count(), 3u * 2 * 9);
}

TEST(LayerCpu, InitialisationFollowsPyTorchBounds) {
  Conv2dOptions o;
  o.filters = 8;
  o.kernel = 3;
  Conv2d conv(o);
  conv.setup(Shape{4, 6, 6});
  std::vector<float> p(conv.param_count());
  std::mt19937_64 rng(3);
  conv.init(rng, p.data(), nullptr);
  const float bound = 1.f / std::sqrt(36.f);
  float lo = 1, hi = -1;
  for (float v : p) {
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  EXPECT_GE(lo, -bound);
  EXPECT_LT(hi, bound);
  EXPECT_LT(lo, -0.8f * bound);  // actually spread over the range
  EXPECT_GT(hi, 0.8f * bound);

  Dense dense(7, true);
  dense.setup(Shape{2, 5, 5});
  std::vector<float> q(dense.param_count());
  dense.init(rng, q.data(), nullptr);
  for (float v : q) EXPECT_LE(std::fabs(v), 1.f / std::sqrt(50.f));

  BatchNorm bn;
  bn.setup(Shape{3, 4, 4});
  std::vector<float> gb(6, -1.f), st(6, -1.f);
  bn.init(rng, gb.data(), st.data());
  EXPECT_EQ(gb, (std::vector<float>{1, 1, 1, 0, 0, 0}));
  EXPECT_EQ(st, (std::vector<float>{0, 0, 0, 1, 1, 1}));
}

TEST(LayerCpu, DenseFlattensA4dInputAndLaysOutWeightThenBias) {
  Dense dense(3, true);
  std::mt19937_64 rng(4);
  Bound b(dense, Shape{2, 2, 2}, 4, rng);
  EXPECT_EQ(b.out, (Shape{3, 1, 1}));
  EXPECT_EQ(dense.param_count(), 3u * 8 + 3);
  const auto x = float_rounded(random_vector(4 * 8, rng));
  const auto dy = float_rounded(random_vector(4 * 3, rng));
  const auto p = to_double(b.params);
  std::vector<double> y_ref(12), dx_ref(32), dw_ref(24), db_ref(3);
  ref::dense_forward(x.data(), p.data(), p.data() + 24, y_ref.data(), 4, 8, 3);
  ref::dense_backward(x.data(), p.data(), dy.data(), dx_ref.data(), dw_ref.data(), db_ref.data(), 4,
                      8, 3);
  const auto xf = to_float(x), dyf = to_float(dy);
  std::vector<float> y(12), dx(32);
  dense.forward(xf.data(), y.data(), 4, true);
  dense.backward(xf.data(), y.data(), dyf.data(), dx.data(), 4);
  EXPECT_TRUE(all_close(y, y_ref, 1e-5, 1e-5));
  EXPECT_TRUE(all_close(dx, dx_ref, 1e-5, 1e-5));
  EXPECT_TRUE(all_close(b.grads.data(), dw_ref.data(), 24, 1e-5, 1e-5));
  EXPECT_TRUE(all_close(b.grads.data() + 24, db_ref.data(), 3, 1e-5, 1e-5));
}

TEST(LayerCpu, BatchNormTrainingUpdatesRunningStatsAndInferenceUsesThem) {
  for (Shape in : {Shape{3, 4, 5}, Shape{6, 1, 1}}) {
    BatchNorm bn;
    std::mt19937_64 rng(5);
    Bound b(bn, in, 8, rng);
    std::mt19937_64 init_rng(0);
    bn.init(init_rng, b.params.data(), b.state.data());
    const int n = 8;
    const BatchNormGeom g{n, in.c, in.h * in.w, 1e-5f, 0.1f};
    const auto x = float_rounded(random_vector(n * in.numel(), rng, 1, 4));
    const auto dy = float_rounded(random_vector(n * in.numel(), rng));
    const auto p = to_double(b.params);
    std::vector<double> rm(in.c, 0.0), rv(in.c, 1.0), mean(in.c), inv(in.c), y_ref(x.size()),
        dx_ref(x.size()), dg(in.c), dbeta(in.c), yi_ref(x.size());
    ref::batchnorm_forward_train(g, x.data(), p.data(), p.data() + in.c, rm.data(), rv.data(),
                                 mean.data(), inv.data(), y_ref.data());
    ref::batchnorm_backward(g, x.data(), dy.data(), p.data(), mean.data(), inv.data(),
                            dx_ref.data(), dg.data(), dbeta.data());
    ref::batchnorm_forward_infer(g, x.data(), p.data(), p.data() + in.c, rm.data(), rv.data(),
                                 yi_ref.data());
    const auto xf = to_float(x), dyf = to_float(dy);
    std::vector<float> y(x.size()), dx(x.size()), yi(x.size());
    bn.forward(xf.data(), y.data(), n, true);
    bn.backward(xf.data(), y.data(), dyf.data(), dx.data(), n);
    bn.forward(xf.data(), yi.data(), n, false);
    EXPECT_TRUE(all_close(y, y_ref, 1e-4, 1e-4));
    EXPECT_TRUE(all_close(dx, dx_ref, 1e-4, 1e-3));
    EXPECT_TRUE(all_close(b.grads.data(), dg.data(), in.c, 1e-4, 1e-4));
    EXPECT_TRUE(all_close(b.grads.data() + in.c, dbeta.data(), in.c, 1e-4, 1e-4));
    EXPECT_TRUE(all_close(b.state.data(), rm.data(), in.c, 1e-6, 1e-5));
    EXPECT_TRUE(all_close(b.state.data() + in.c, rv.data(), in.c, 1e-6, 1e-5));
    EXPECT_TRUE(all_close(yi, yi_ref, 1e-4, 1e-4));
  }
}

TEST(LayerCpu, BatchNormRefusesOneValuePerChannelInTraining) {
  BatchNorm bn;
  std::mt19937_64 rng(6);
  Bound b(bn, Shape{4, 1, 1}, 2, rng);
  std::vector<float> x(4, 1.f), y(4);
  EXPECT_THROW(bn.forward(x.data(), y.data(), 1, true), Error);
  EXPECT_NO_THROW(bn.forward(x.data(), y.data(), 1, false));
}

TEST(LayerCpu, PoolingLayers) {
  std::mt19937_64 rng(7);
  Pool2d maxpool(PoolMode::max, 3, 2, 1);
  EXPECT_EQ(maxpool.setup(Shape{2, 7, 8}), (Shape{2, 4, 4}));
  EXPECT_THROW(Pool2d(PoolMode::max, 2, 2, 0).setup(Shape{1, 1, 5}), Error);
  EXPECT_THROW(Pool2d(PoolMode::max, 2, 2, 2).setup(Shape{1, 6, 6}), Error);  // pad > size / 2
  GlobalAvgPool gap;
  Bound b(gap, Shape{3, 4, 5}, 2, rng);
  EXPECT_EQ(b.out, (Shape{3, 1, 1}));
  const auto x = float_rounded(random_vector(2 * 60, rng));
  const auto dy = float_rounded(random_vector(6, rng));
  const PoolGeom g{2, 3, 4, 5, 4, 5, 4, 5, 0, 0, 1, 1};
  std::vector<double> y_ref(6), dx_ref(120);
  ref::pool_forward(g, PoolMode::average, x.data(), y_ref.data());
  ref::pool_backward(g, PoolMode::average, x.data(), y_ref.data(), dy.data(), dx_ref.data());
  const auto xf = to_float(x), dyf = to_float(dy);
  std::vector<float> y(6), dx(120);
  gap.forward(xf.data(), y.data(), 2, true);
  gap.backward(xf.data(), y.data(), dyf.data(), dx.data(), 2);
  EXPECT_TRUE(all_close(y, y_ref, 1e-6, 1e-5));
  EXPECT_TRUE(all_close(dx, dx_ref, 1e-7, 1e-5));
}

TEST(LayerCpu, DropoutTrainsWithAMaskAndIsIdentityAtInference) {
  Dropout drop(0.5f);
  std::mt19937_64 rng(8);
  Bound b(drop, Shape{10, 1, 1}, 4, rng);
  const auto x = to_float(random_vector(40, rng, 1, 2));
  std::vector<float> y(40), dx(40), dy(40, 1.f);
  drop.set_random(1, 0);
  drop.forward(x.data(), y.data(), 4, true);
  int zeros = 0;
  for (int i = 0; i < 40; ++i) {
    if (y[i] == 0.f)
      ++zeros;
    else
      EXPECT_FLOAT_EQ(y[i], 2.f * x[i]);
  }
  EXPECT_GT(zeros, 5);
  EXPECT_LT(zeros, 35);
  drop.backward(x.data(), y.data(), dy.data(), dx.data(), 4);
  for (int i = 0; i < 40; ++i) EXPECT_EQ(dx[i], y[i] == 0.f ? 0.f : 2.f);
  drop.forward(x.data(), y.data(), 4, false);
  EXPECT_EQ(y, x);
  drop.backward(x.data(), y.data(), dy.data(), dx.data(), 4);
  EXPECT_EQ(dx, dy);
  EXPECT_THROW(Dropout(1.f).setup(Shape{1, 1, 1}), Error);
}

}  // namespace
}  // namespace sweep::trainer
