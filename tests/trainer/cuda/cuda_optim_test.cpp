/*
 * cuda_optim_test.cpp — the CUDA backend's optimizer ops (cuda_optim.cu): the gradient norm,
 * clipping scale and every optimizer's step, against the CPU backend (fixture and tolerances:
 * cuda_ops_fixture.h).
 */
#include <vector>

#include "tests/trainer/cuda/cuda_ops_fixture.h"

namespace sweep::trainer::test {
namespace {

TEST_F(CudaOps, SumSquaresAndClipScale) {
  for (std::size_t n : {std::size_t{1}, std::size_t{4097}, std::size_t{431080}}) {
    auto x = twin_random(n);
    const double start = 0.75;
    DeviceBuffer sc(*cpu, 8), sg(*gpu, 8);
    cpu->copy_to_device(sc.as<void>(), &start, 8);
    gpu->copy_to_device(sg.as<void>(), &start, 8);
    cpu->sum_squares(x.cf(), n, sc.as<double>());
    gpu->sum_squares(x.gf(), n, sg.as<double>());
    const double c = host<double>(*cpu, sc.as<void>(), 1)[0],
                 g = host<double>(*gpu, sg.as<void>(), 1)[0];
    EXPECT_NEAR(g, c, 1e-9 * c) << "sum_squares n=" << n;
    for (float max_norm : {0.1f, 1e6f}) {
      DeviceBuffer fc(*cpu, 4), fg(*gpu, 4);
      cpu->clip_scale(sc.as<double>(), max_norm, fc.f());
      gpu->clip_scale(sg.as<double>(), max_norm, fg.f());
      EXPECT_NEAR(host(*gpu, fg.as<void>(), 1)[0], host(*cpu, fc.as<void>(), 1)[0], 1e-6)
          << "clip_scale max_norm=" << max_norm;
    }
  }
}

TEST_F(CudaOps, OptimizerStepAllKinds) {
  const std::size_t n = 100001;
  for (OptimizerKind kind : {OptimizerKind::sgdm, OptimizerKind::adam, OptimizerKind::rmsprop}) {
    for (bool nesterov : {false, true}) {
      for (bool scaled : {false, true}) {
        if (nesterov && kind != OptimizerKind::sgdm) continue;
        OptimizerStep s;
        s.kind = kind;
        s.lr = 0.03f;
        s.nesterov = nesterov;
        s.weight_decay = 5e-4f;
        s.t = 3;
        const std::string tag = std::string("optimizer kind ") + std::to_string(int(kind)) +
                                (nesterov ? " nesterov" : "") + (scaled ? " scaled" : "");
        auto p = twin_random(n), g = twin_random(n), s1 = twin_random(n, 0.f, 0.1f);
        auto s2 = twin_random(n, 0.f, 0.01f), gs = twin(std::vector<float>{0.5f});
        // The GPU updates 16-byte aligned arrays four parameters a thread (the last n % 4 alone),
        // others one a thread: the first 50001 (aligned, one left over), then the rest from an
        // unaligned start, both against the CPU's one call.
        const std::size_t half = n / 2 + 1;
        for (int step = 0; step < 3; ++step, ++s.t) {
          cpu->optimizer_step(s, p.cf(), g.cf(), s1.cf(), s2.cf(), n, scaled ? gs.cf() : nullptr);
          gpu->optimizer_step(s, p.gf(), g.gf(), s1.gf(), s2.gf(), half,
                              scaled ? gs.gf() : nullptr);
          gpu->optimizer_step(s, p.gf() + half, g.gf() + half, s1.gf() + half, s2.gf() + half,
                              n - half, scaled ? gs.gf() : nullptr);
        }
        expect_close(p, 1e-6, 1e-5, tag + " params");
        expect_close(s1, 1e-6, 1e-5, tag + " state1");
        if (kind == OptimizerKind::adam) expect_close(s2, 1e-7, 1e-5, tag + " state2");
      }
    }
  }
}

}  // namespace
}  // namespace sweep::trainer::test
