/*
 * cuda_ops_fixture.h — the fixture of the CUDA backend's op tests (CudaOps, one suite over the
 * files cuda_<family>_test.cpp named after the units they test): shapes, tolerances and the
 * convolution check that several families share.
 *
 * Fresh random inputs per run (the seed is printed on failure), outputs poisoned with NaN first,
 * several shapes per op (stride 2, padding, batch 1, odd sizes). Tolerances are fp32's: the two
 * backends sum in different orders, so results agree to rounding, not bit for bit, except where
 * the contract says bit for bit (gather, dropout), which is checked with memcmp. The fixture is
 * not in an anonymous namespace: GoogleTest needs one fixture type for the suite in every file.
 */
#pragma once

#include <cstddef>
#include <string>

#include "tests/trainer/cuda/cuda_test_util.h"
#include "tests/trainer/op_geometry.h"

namespace sweep::trainer::test {

inline constexpr double kTol = 2e-4, kEps = 2e-4;  // elementwise fp32 vs fp32 with other sum orders

using testing::conv_geom;
using testing::pool_geom;

class CudaOps : public CudaVsCpu {
 protected:
  // Forward (with and without bias) and backward (with and without dx and db) of `g` on both
  // backends.
  void check_conv(const ConvGeom& g);
};

inline void CudaOps::check_conv(const ConvGeom& g) {
  const std::string tag =
      "conv n" + std::to_string(g.n) + " c" + std::to_string(g.c) + " " + std::to_string(g.h) +
      "x" + std::to_string(g.w) + " k" + std::to_string(g.k) + " " + std::to_string(g.r) + "x" +
      std::to_string(g.s) + " s" + std::to_string(g.stride_h) + " p" + std::to_string(g.pad_h);
  const std::size_t xs = std::size_t(g.n) * g.c * g.h * g.w;
  const std::size_t ws = std::size_t(g.k) * g.c * g.r * g.s;
  const std::size_t ys = std::size_t(g.n) * g.k * g.out_h * g.out_w;
  auto x = twin_random(xs), w = twin_random(ws), b = twin_random(g.k), y = twin_out(ys);
  cpu->conv2d_forward(g, x.cf(), w.cf(), b.cf(), y.cf());
  gpu->conv2d_forward(g, x.gf(), w.gf(), b.gf(), y.gf());
  expect_close(y, 1e-3, kEps, tag + " y");
  auto y2 = twin_out(ys);  // without bias
  cpu->conv2d_forward(g, x.cf(), w.cf(), nullptr, y2.cf());
  gpu->conv2d_forward(g, x.gf(), w.gf(), nullptr, y2.gf());
  expect_close(y2, 1e-3, kEps, tag + " y (no bias)");
  auto dy = twin_random(ys), dx = twin_out(xs), dw = twin_out(ws), db = twin_out(g.k);
  cpu->conv2d_backward(g, x.cf(), w.cf(), dy.cf(), dx.cf(), dw.cf(), db.cf());
  gpu->conv2d_backward(g, x.gf(), w.gf(), dy.gf(), dx.gf(), dw.gf(), db.gf());
  expect_close(dx, 1e-3, kEps, tag + " dx");
  expect_close(dw, 2e-3, kEps, tag + " dw");
  expect_close(db, 2e-3, kEps, tag + " db");
  // dx may be skipped (first layer); dw overwritten, not accumulated.
  auto dw2 = twin_random(ws);
  gpu->conv2d_backward(g, x.gf(), w.gf(), dy.gf(), nullptr, dw2.gf(), nullptr);
  cpu->conv2d_backward(g, x.cf(), w.cf(), dy.cf(), nullptr, dw2.cf(), nullptr);
  expect_close(dw2, 2e-3, kEps, tag + " dw (overwrite)");
}

}  // namespace sweep::trainer::test
