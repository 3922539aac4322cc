/*
 * cuda_loss_test.cpp — the CUDA backend's losses (cuda_loss.cu): softmax cross-entropy and argmax,
 * against the CPU backend (fixture and tolerances: cuda_ops_fixture.h).
 */
#include <vector>

#include "tests/trainer/cuda/cuda_ops_fixture.h"

namespace sweep::trainer::test {
namespace {

TEST_F(CudaOps, SoftmaxCrossEntropyAndArgmax) {
  struct Case {
    int n, classes;
  };
  for (const Case k : {Case{64, 10}, Case{1, 3}, Case{257, 100}, Case{1000, 10}, Case{5, 37}}) {
    const std::string tag = "xent n" + std::to_string(k.n) + " classes" + std::to_string(k.classes);
    const std::size_t ls = std::size_t(k.n) * k.classes;
    auto logits = twin_random(ls, -6.f, 6.f), dl = twin_out(ls);
    std::vector<std::int32_t> labels(k.n);
    std::uniform_int_distribution<int> pick(0, k.classes - 1);
    for (auto& l : labels) l = pick(rng);
    DeviceBuffer lc(*cpu, k.n * 4), lg(*gpu, k.n * 4);
    cpu->copy_to_device(lc.as<void>(), labels.data(), k.n * 4);
    gpu->copy_to_device(lg.as<void>(), labels.data(), k.n * 4);
    const double start[2] = {1.5, 2.0};  // stats are ADDED to
    DeviceBuffer sc(*cpu, 16), sg(*gpu, 16);
    cpu->copy_to_device(sc.as<void>(), start, 16);
    gpu->copy_to_device(sg.as<void>(), start, 16);
    cpu->softmax_cross_entropy(logits.cf(), lc.as<std::int32_t>(), k.n, k.classes, dl.cf(),
                               sc.as<double>());
    gpu->softmax_cross_entropy(logits.gf(), lg.as<std::int32_t>(), k.n, k.classes, dl.gf(),
                               sg.as<double>());
    expect_close(dl, 1e-7, 1e-5, tag + " dlogits");
    const auto stc = host<double>(*cpu, sc.as<void>(), 2),
               stg = host<double>(*gpu, sg.as<void>(), 2);
    EXPECT_NEAR(stg[0], stc[0], 1e-9 * k.n + 1e-12 * std::fabs(stc[0])) << tag << " loss sum";
    EXPECT_EQ(stg[1], stc[1]) << tag << " correct count";
    // Without dlogits only the stats change.
    gpu->softmax_cross_entropy(logits.gf(), lg.as<std::int32_t>(), k.n, k.classes, nullptr,
                               sg.as<double>());
    const auto stg2 = host<double>(*gpu, sg.as<void>(), 2);
    EXPECT_NEAR(stg2[0] - stg[0], stc[0] - start[0], 1e-6 * k.n) << tag << " second add";
    DeviceBuffer pc(*cpu, k.n * 4), pg(*gpu, k.n * 4);
    cpu->argmax(logits.cf(), k.n, k.classes, pc.as<std::int32_t>());
    gpu->argmax(logits.gf(), k.n, k.classes, pg.as<std::int32_t>());
    EXPECT_EQ(host<std::int32_t>(*cpu, pc.as<void>(), k.n),
              host<std::int32_t>(*gpu, pg.as<void>(), k.n))
        << tag << " argmax";
  }
}

TEST_F(CudaOps, ArgmaxTakesFirstMaximumOnTies) {
  const std::vector<float> logits = {1, 3, 3, 0, /**/ 2, 2, 2, 2, /**/ -1, -5, -1, -1};
  auto l = twin(logits);
  DeviceBuffer pg(*gpu, 12);
  gpu->argmax(l.gf(), 3, 4, pg.as<std::int32_t>());
  EXPECT_EQ(host<std::int32_t>(*gpu, pg.as<void>(), 3), (std::vector<std::int32_t>{1, 0, 0}));
}

}  // namespace
}  // namespace sweep::trainer::test
