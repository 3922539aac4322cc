/*
 * cpu_conv_dense_test.cpp — the CPU backend's dense and convolution ops against the double
 * references, on fresh random data, over shapes chosen to hit every edge of im2col: odd sizes,
 * stride 2, padding, "same" padding, 1x1 kernels (the no-im2col path), batch 1, and batches larger
 * than the weight-gradient slice count.
 */
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "gradcheck.h"
#include "op_geometry.h"
#include "reference_ops.h"
#include "trainer/cpu/cpu_backend.h"

namespace sweep::trainer {
namespace {

using testing::all_close;
using testing::conv_geom;
using testing::float_rounded;
using testing::random_vector;
using testing::to_float;

struct ConvCase {
  const char* name;
  ConvGeom g;
  bool bias;
};

class CpuConv : public ::testing::TestWithParam<ConvCase> {};

TEST_P(CpuConv, ForwardAndBackwardMatchReference) {
  const ConvGeom g = GetParam().g;
  const bool bias = GetParam().bias;
  std::mt19937_64 rng(7 + g.n * 31 + g.k);
  const std::size_t xs = std::size_t(g.n) * g.c * g.h * g.w,
                    ws = std::size_t(g.k) * g.c * g.r * g.s;
  const std::size_t ys = std::size_t(g.n) * g.k * g.out_h * g.out_w;
  const auto x = float_rounded(random_vector(xs, rng));
  const auto w = float_rounded(random_vector(ws, rng));
  const auto b = float_rounded(random_vector(g.k, rng));
  const auto dy = float_rounded(random_vector(ys, rng));

  std::vector<double> y_ref(ys), dx_ref(xs), dw_ref(ws), db_ref(g.k);
  ref::conv2d_forward(g, x.data(), w.data(), bias ? b.data() : nullptr, y_ref.data());
  ref::conv2d_backward(g, x.data(), w.data(), dy.data(), dx_ref.data(), dw_ref.data(),
                       bias ? db_ref.data() : nullptr);

  CpuBackend cpu(2);
  const auto xf = to_float(x), wf = to_float(w), bf = to_float(b), dyf = to_float(dy);
  std::vector<float> y(ys), dx(xs), dw(ws), db(g.k, -7.f);
  cpu.conv2d_forward(g, xf.data(), wf.data(), bias ? bf.data() : nullptr, y.data());
  // Run backward twice: gradients are overwritten, never accumulated.
  for (int rep = 0; rep < 2; ++rep)
    cpu.conv2d_backward(g, xf.data(), wf.data(), dyf.data(), dx.data(), dw.data(),
                        bias ? db.data() : nullptr);
  const double eps = 1e-4, tol = 1e-4;
  EXPECT_TRUE(all_close(y, y_ref, tol, eps));
  EXPECT_TRUE(all_close(dx, dx_ref, tol, eps));
  EXPECT_TRUE(all_close(dw, dw_ref, tol * g.n, eps));
  if (bias)
    EXPECT_TRUE(all_close(db, db_ref, tol * g.n, eps));
  else
    EXPECT_EQ(db[0], -7.f);  // untouched when null

  // dx = null (first layer) leaves the weight gradient unchanged.
  std::vector<float> dw2(ws);
  cpu.conv2d_backward(g, xf.data(), wf.data(), dyf.data(), nullptr, dw2.data(), nullptr);
  EXPECT_EQ(dw2, dw);
}

INSTANTIATE_TEST_SUITE_P(
    ConvShapes, CpuConv,
    ::testing::Values(ConvCase{"lenet1", conv_geom(3, 1, 28, 28, 20, 5, 5, 1, 0), true},
                      ConvCase{"odd", conv_geom(2, 3, 7, 9, 4, 3, 3, 1, 0), true},
                      ConvCase{"stride2", conv_geom(3, 2, 9, 8, 5, 3, 3, 2, 0), true},
                      ConvCase{"stride2pad", conv_geom(2, 3, 10, 7, 3, 3, 3, 2, 1), false},
                      ConvCase{"same", conv_geom(4, 3, 8, 8, 6, 3, 3, 1, 1), false},
                      ConvCase{"same5", conv_geom(2, 2, 6, 5, 3, 5, 5, 1, 2), true},
                      ConvCase{"pointwise", conv_geom(3, 5, 4, 6, 7, 1, 1, 1, 0), true},
                      ConvCase{"pointwise_stride", conv_geom(2, 3, 5, 5, 2, 1, 1, 2, 0), true},
                      ConvCase{"batch1", conv_geom(1, 2, 6, 6, 3, 3, 3, 1, 1), true},
                      ConvCase{"batch19", conv_geom(19, 2, 5, 5, 3, 3, 3, 1, 0), true},
                      ConvCase{"kernel_eq_input", conv_geom(2, 2, 4, 4, 3, 4, 4, 1, 0), true},
                      ConvCase{"big_pad", conv_geom(2, 1, 3, 3, 2, 3, 3, 1, 2), true},
                      ConvCase{"rect_kernel", conv_geom(2, 2, 7, 6, 3, 3, 2, 1, 1), true}),
    [](const ::testing::TestParamInfo<ConvCase>& p) { return std::string(p.param.name); });

struct DenseCase {
  int n, in, out;
  bool bias;
};
class CpuDense : public ::testing::TestWithParam<DenseCase> {};

TEST_P(CpuDense, ForwardAndBackwardMatchReference) {
  const auto [n, in, out, bias] = GetParam();
  std::mt19937_64 rng(11 + n * 7 + in);
  const auto x = float_rounded(random_vector(std::size_t(n) * in, rng));
  const auto w = float_rounded(random_vector(std::size_t(out) * in, rng));
  const auto b = float_rounded(random_vector(out, rng));
  const auto dy = float_rounded(random_vector(std::size_t(n) * out, rng));
  std::vector<double> y_ref(std::size_t(n) * out), dx_ref(std::size_t(n) * in),
      dw_ref(std::size_t(out) * in), db_ref(out);
  ref::dense_forward(x.data(), w.data(), bias ? b.data() : nullptr, y_ref.data(), n, in, out);
  ref::dense_backward(x.data(), w.data(), dy.data(), dx_ref.data(), dw_ref.data(), db_ref.data(), n,
                      in, out);

  CpuBackend cpu(2);
  const auto xf = to_float(x), wf = to_float(w), bf = to_float(b), dyf = to_float(dy);
  std::vector<float> y(y_ref.size()), dx(dx_ref.size(), 5.f), dw(dw_ref.size(), 5.f), db(out, 5.f);
  cpu.dense_forward(xf.data(), wf.data(), bias ? bf.data() : nullptr, y.data(), n, in, out);
  cpu.dense_backward(xf.data(), wf.data(), dyf.data(), dx.data(), dw.data(), db.data(), n, in, out);
  EXPECT_TRUE(all_close(y, y_ref, 1e-4, 1e-4));
  EXPECT_TRUE(all_close(dx, dx_ref, 1e-4, 1e-4));
  EXPECT_TRUE(all_close(dw, dw_ref, 1e-4, 1e-4));
  EXPECT_TRUE(all_close(db, db_ref, 1e-4, 1e-4));
}

INSTANTIATE_TEST_SUITE_P(DenseShapes, CpuDense,
                         ::testing::Values(DenseCase{1, 1, 1, true}, DenseCase{1, 7, 3, true},
                                           DenseCase{5, 13, 9, false},
                                           DenseCase{64, 800, 500, true},
                                           DenseCase{33, 17, 1, true},
                                           DenseCase{700, 30, 10, true}));

TEST(CpuBackend, ResultsDoNotDependOnThreadCount) {
  const ConvGeom g = conv_geom(24, 3, 11, 11, 8, 3, 3, 1, 1);
  std::mt19937_64 rng(3);
  const auto x = to_float(random_vector(std::size_t(g.n) * g.c * g.h * g.w, rng));
  const auto w = to_float(random_vector(std::size_t(g.k) * g.c * 9, rng));
  const auto dy = to_float(random_vector(std::size_t(g.n) * g.k * g.out_h * g.out_w, rng));
  std::vector<float> dw1(w.size()), dw4(w.size()), dx1(x.size()), dx4(x.size());
  CpuBackend one(1), four(4);
  one.conv2d_backward(g, x.data(), w.data(), dy.data(), dx1.data(), dw1.data(), nullptr);
  four.conv2d_backward(g, x.data(), w.data(), dy.data(), dx4.data(), dw4.data(), nullptr);
  EXPECT_EQ(dw1, dw4);
  EXPECT_EQ(dx1, dx4);
  EXPECT_EQ(one.threads(), 1);
  EXPECT_NE(one.name().find("1 thread"), std::string::npos);
}

}  // namespace
}  // namespace sweep::trainer
