/*
 * cuda_batchnorm_test.cpp — the CUDA backend's batch norm (cuda_batchnorm.cu): training, inference
 * and backward, against the CPU backend (fixture and tolerances: cuda_ops_fixture.h).
 */
#include "tests/trainer/cuda/cuda_ops_fixture.h"

namespace sweep::trainer::test {
namespace {

TEST_F(CudaOps, BatchNormTrainInferBackward) {
  struct Case {
    int n, c, hw;
  };
  // Channels split into several chunks (one block each; the last one short) and into one.
  for (const Case k : {Case{64, 16, 64}, Case{3, 5, 7 * 9}, Case{32, 100, 1}, Case{128, 32, 256},
                       Case{37, 8, 300}}) {
    const BatchNormGeom g{k.n, k.c, k.hw, 1e-5f, 0.1f};
    const std::string tag = "batchnorm n" + std::to_string(k.n) + " c" + std::to_string(k.c) +
                            " hw" + std::to_string(k.hw);
    const std::size_t xs = std::size_t(k.n) * k.c * k.hw;
    auto x = twin_random(xs, -2.f, 3.f), gamma = twin_random(k.c, 0.5f, 1.5f);
    auto beta = twin_random(k.c), rmean = twin_random(k.c), rvar = twin_random(k.c, 0.5f, 2.f);
    auto smean = twin_out(k.c), sinv = twin_out(k.c), y = twin_out(xs);
    cpu->batchnorm_forward_train(g, x.cf(), gamma.cf(), beta.cf(), rmean.cf(), rvar.cf(),
                                 smean.cf(), sinv.cf(), y.cf());
    gpu->batchnorm_forward_train(g, x.gf(), gamma.gf(), beta.gf(), rmean.gf(), rvar.gf(),
                                 smean.gf(), sinv.gf(), y.gf());
    expect_close(y, 1e-4, 1e-4, tag + " y");
    expect_close(smean, 1e-5, 1e-5, tag + " save_mean");
    expect_close(sinv, 1e-5, 1e-4, tag + " save_invstd");
    expect_close(rmean, 1e-5, 1e-5, tag + " running_mean");
    expect_close(rvar, 1e-5, 1e-4, tag + " running_var (unbiased)");
    auto yi = twin_out(xs);
    cpu->batchnorm_forward_infer(g, x.cf(), gamma.cf(), beta.cf(), rmean.cf(), rvar.cf(), yi.cf());
    gpu->batchnorm_forward_infer(g, x.gf(), gamma.gf(), beta.gf(), rmean.gf(), rvar.gf(), yi.gf());
    expect_close(yi, 1e-4, 1e-4, tag + " y (inference)");
    auto dy = twin_random(xs), dx = twin_out(xs), dg = twin_out(k.c), db = twin_out(k.c);
    cpu->batchnorm_backward(g, x.cf(), dy.cf(), gamma.cf(), smean.cf(), sinv.cf(), dx.cf(), dg.cf(),
                            db.cf());
    gpu->batchnorm_backward(g, x.gf(), dy.gf(), gamma.gf(), smean.gf(), sinv.gf(), dx.gf(), dg.gf(),
                            db.gf());
    expect_close(dx, 1e-4, 1e-3, tag + " dx");
    expect_close(dg, 1e-3, 1e-4, tag + " dgamma");
    expect_close(db, 1e-3, 1e-4, tag + " dbeta");
    // With a ReLU folded in: the CPU composes the two ops (Backend's defaults), CUDA runs one pass.
    auto yr = twin_out(xs), yri = twin_out(xs);
    cpu->batchnorm_forward_train_relu(g, x.cf(), gamma.cf(), beta.cf(), rmean.cf(), rvar.cf(),
                                      smean.cf(), sinv.cf(), yr.cf());
    gpu->batchnorm_forward_train_relu(g, x.gf(), gamma.gf(), beta.gf(), rmean.gf(), rvar.gf(),
                                      smean.gf(), sinv.gf(), yr.gf());
    expect_close(yr, 1e-4, 1e-4, tag + " relu y");
    cpu->batchnorm_forward_infer_relu(g, x.cf(), gamma.cf(), beta.cf(), rmean.cf(), rvar.cf(),
                                      yri.cf());
    gpu->batchnorm_forward_infer_relu(g, x.gf(), gamma.gf(), beta.gf(), rmean.gf(), rvar.gf(),
                                      yri.gf());
    expect_close(yri, 1e-4, 1e-4, tag + " relu y (inference)");
    // The CPU's y as both sides' ReLU output, so the masks agree exactly.
    auto yc = twin(host(*cpu, yr.c.as<void>(), xs)), dxr = twin_out(xs);
    auto dgr = twin_out(k.c), dbr = twin_out(k.c);
    cpu->batchnorm_backward_relu(g, x.cf(), yc.cf(), dy.cf(), gamma.cf(), smean.cf(), sinv.cf(),
                                 dxr.cf(), dgr.cf(), dbr.cf());
    gpu->batchnorm_backward_relu(g, x.gf(), yc.gf(), dy.gf(), gamma.gf(), smean.gf(), sinv.gf(),
                                 dxr.gf(), dgr.gf(), dbr.gf());
    expect_close(dxr, 1e-4, 1e-3, tag + " relu dx");
    expect_close(dgr, 1e-3, 1e-4, tag + " relu dgamma");
    expect_close(dbr, 1e-3, 1e-4, tag + " relu dbeta");
  }
}

}  // namespace
}  // namespace sweep::trainer::test
