/*
 * cuda_dense_test.cpp — the CUDA backend's dense layer (cuda_dense.cu), with and without the ReLU
 * folded in, against the CPU backend (fixture and tolerances: cuda_ops_fixture.h).
 */
#include <cstring>

#include "tests/trainer/cuda/cuda_ops_fixture.h"

namespace sweep::trainer::test {
namespace {

TEST_F(CudaOps, DenseForwardBackward) {
  struct Case {
    int n, in, out;
    bool bias, dx;
  };
  // out <= 32: our skinny kernels (a classifier head); wider: cuBLAS. Share 8 (a fused array's
  // member): a 10-class head's forward takes a warp per row, and must give the bits of share 1's.
  for (const Case c :
       {Case{64, 800, 500, true, true}, Case{1, 17, 3, true, true}, Case{33, 129, 10, false, false},
        Case{256, 500, 10, true, true}, Case{256, 2048, 32, true, true},
        Case{64, 500, 33, true, true}, Case{7, 4099, 1, true, false}})
    for (int share : {1, 8}) {
      gpu->set_gpu_share(share);
      const std::string tag = "share " + std::to_string(share) + " dense " + std::to_string(c.n) +
                              "x" + std::to_string(c.in) + "->" + std::to_string(c.out);
      auto x = twin_random(std::size_t(c.n) * c.in), w = twin_random(std::size_t(c.out) * c.in);
      auto b = twin_random(c.out), y = twin_out(std::size_t(c.n) * c.out);
      cpu->dense_forward(x.cf(), w.cf(), c.bias ? b.cf() : nullptr, y.cf(), c.n, c.in, c.out);
      gpu->dense_forward(x.gf(), w.gf(), c.bias ? b.gf() : nullptr, y.gf(), c.n, c.in, c.out);
      expect_close(y, 1e-3, kEps, tag + " y");
      if (c.out <= 32) {  // our kernels: share 1's bits
        gpu->set_gpu_share(1);
        auto y1 = twin_out(std::size_t(c.n) * c.out);
        gpu->dense_forward(x.gf(), w.gf(), c.bias ? b.gf() : nullptr, y1.gf(), c.n, c.in, c.out);
        EXPECT_EQ(0, std::memcmp(host(*gpu, y.g.as<void>(), std::size_t(c.n) * c.out).data(),
                                 host(*gpu, y1.g.as<void>(), std::size_t(c.n) * c.out).data(),
                                 std::size_t(c.n) * c.out * 4))
            << tag << ": not the bits of the lone step's kernel";
        gpu->set_gpu_share(share);
      }
      auto dy = twin_random(std::size_t(c.n) * c.out), dx = twin_out(std::size_t(c.n) * c.in);
      auto dw = twin_out(std::size_t(c.out) * c.in), db = twin_out(c.out);
      cpu->dense_backward(x.cf(), w.cf(), dy.cf(), c.dx ? dx.cf() : nullptr, dw.cf(),
                          c.bias ? db.cf() : nullptr, c.n, c.in, c.out);
      gpu->dense_backward(x.gf(), w.gf(), dy.gf(), c.dx ? dx.gf() : nullptr, dw.gf(),
                          c.bias ? db.gf() : nullptr, c.n, c.in, c.out);
      if (c.dx) expect_close(dx, 1e-3, kEps, tag + " dx");
      expect_close(dw, 1e-3, kEps, tag + " dw");
      if (c.bias) expect_close(db, 1e-3, kEps, tag + " db");
    }
}

// A dense layer with the ReLU after it (forward) or before it (backward) folded in: against the
// CPU backend (whose defaults run the two ops), and bit for bit against the CUDA backend's own
// two ops, skinny kernels and cuBLAS alike.
TEST_F(CudaOps, DenseWithReluFoldedIn) {
  struct Case {
    int n, in, out;
    bool bias;
  };
  for (const Case c : {Case{64, 800, 500, true}, Case{64, 500, 10, true}, Case{1, 17, 3, false},
                       Case{256, 2048, 32, true}, Case{33, 129, 40, false}}) {
    const std::string tag =
        "dense " + std::to_string(c.n) + "x" + std::to_string(c.in) + "->" + std::to_string(c.out);
    const std::size_t nx = std::size_t(c.n) * c.in, ny = std::size_t(c.n) * c.out;
    auto x = twin_random(nx), w = twin_random(std::size_t(c.out) * c.in);
    auto b = twin_random(c.out), y = twin_out(ny), y2 = twin_out(ny);
    cpu->dense_forward_relu(x.cf(), w.cf(), c.bias ? b.cf() : nullptr, y.cf(), c.n, c.in, c.out);
    gpu->dense_forward_relu(x.gf(), w.gf(), c.bias ? b.gf() : nullptr, y.gf(), c.n, c.in, c.out);
    expect_close(y, 1e-3, kEps, tag + " relu(y)");
    gpu->dense_forward(x.gf(), w.gf(), c.bias ? b.gf() : nullptr, y2.gf(), c.n, c.in, c.out);
    gpu->relu_forward(y2.gf(), y2.gf(), ny);
    EXPECT_EQ(0, std::memcmp(host(*gpu, y.g.as<void>(), ny).data(),
                             host(*gpu, y2.g.as<void>(), ny).data(), ny * 4))
        << tag << ": the folded forward differs from dense_forward + relu_forward";

    auto dy = twin_random(ny), dx = twin_out(nx), dx2 = twin_out(nx);
    auto dw = twin_out(std::size_t(c.out) * c.in), db = twin_out(c.out);
    cpu->dense_backward_relu_input(x.cf(), w.cf(), dy.cf(), dx.cf(), dw.cf(),
                                   c.bias ? db.cf() : nullptr, c.n, c.in, c.out);
    gpu->dense_backward_relu_input(x.gf(), w.gf(), dy.gf(), dx.gf(), dw.gf(),
                                   c.bias ? db.gf() : nullptr, c.n, c.in, c.out);
    expect_close(dx, 1e-3, kEps, tag + " dx through the ReLU");
    expect_close(dw, 1e-3, kEps, tag + " dw");
    if (c.bias) expect_close(db, 1e-3, kEps, tag + " db");
    auto dw2 = twin_out(std::size_t(c.out) * c.in), db2 = twin_out(c.out);
    gpu->dense_backward(x.gf(), w.gf(), dy.gf(), dx2.gf(), dw2.gf(), c.bias ? db2.gf() : nullptr,
                        c.n, c.in, c.out);
    gpu->relu_backward(x.gf(), dx2.gf(), dx2.gf(), nx);
    EXPECT_EQ(0, std::memcmp(host(*gpu, dx.g.as<void>(), nx).data(),
                             host(*gpu, dx2.g.as<void>(), nx).data(), nx * 4))
        << tag << ": the folded backward differs from dense_backward + relu_backward";
  }
}

}  // namespace
}  // namespace sweep::trainer::test
