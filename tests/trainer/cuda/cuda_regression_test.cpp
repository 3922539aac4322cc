/*
 * cuda_regression_test.cpp — the CUDA backend's float features and regression against the CPU
 * backend: BatchSource's gather of float features (hundreds of channels, augmented) and float
 * targets bit for bit, the mean squared error's gradient bit for bit and its statistics to
 * summation order, and a whole regression run on the GPU ending where the CPU's ends.
 */
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "tests/trainer/cuda/cuda_test_util.h"
#include "tests/trainer/regression_data.h"
#include "trainer/data/batch_source.h"
#include "trainer/data/synthetic.h"
#include "trainer/train.h"

namespace sweep::trainer {
namespace {

class CudaRegression : public test::CudaVsCpu {};

TEST_F(CudaRegression, FloatGatherMatchesCpuBitForBit) {
  struct Case {
    int c, h, w;
    bool flip;
    int shift;
  };
  for (const Case k :
       {Case{500, 1, 1, false, 0}, Case{3, 9, 7, true, 2}, Case{1, 28, 28, true, 3}}) {
    const std::string tag =
        "features c" + std::to_string(k.c) + " " + std::to_string(k.h) + "x" + std::to_string(k.w);
    SyntheticSpec spec;
    spec.train_size = 100;
    spec.channels = k.c;
    spec.height = k.h;
    spec.width = k.w;
    spec.seed = seed;
    Dataset d = make_synthetic_regression(spec, "train");
    for (std::size_t i = 0; i < d.features.size(); ++i) d.features[i] += float(i % 7) * 100.f;
    const ChannelStats stats = channel_stats(d);
    AugmentSpec augment;
    augment.flip = k.flip;
    augment.translate = k.shift;
    const int batch = 24;
    BatchSource sc(*cpu, d, stats, batch, ShuffleMode::every_epoch, 3, augment, true);
    BatchSource sg(*gpu, d, stats, batch, ShuffleMode::every_epoch, 3, augment, true);
    sc.begin_epoch(2);
    sg.begin_epoch(2);
    const std::size_t n = std::size_t(batch) * k.c * k.h * k.w;
    auto x = twin_out(n), y = twin_out(batch);
    sc.gather(1, 5, true, x.cf(), y.cf());
    sg.gather(1, 5, true, x.gf(), y.gf());
    const auto xc = host(*cpu, x.c.as<void>(), n), xg = host(*gpu, x.g.as<void>(), n);
    EXPECT_EQ(0, std::memcmp(xc.data(), xg.data(), n * 4)) << tag << " features";
    EXPECT_EQ(host(*cpu, y.c.as<void>(), batch), host(*gpu, y.g.as<void>(), batch))
        << tag << " targets";
  }
}

TEST_F(CudaRegression, MeanSquaredErrorMatchesCpu) {
  for (const int n : {1, 31, 257, 4096}) {
    const std::string tag = "mse n" + std::to_string(n);
    auto pred = twin_random(n, -4.f, 4.f), target = twin_random(n, -4.f, 4.f), d = twin_out(n);
    const double start[2] = {1.5, 2.0};  // stats are ADDED to
    DeviceBuffer stc(*cpu, 16), stg(*gpu, 16);
    cpu->copy_to_device(stc.as<void>(), start, 16);
    gpu->copy_to_device(stg.as<void>(), start, 16);
    cpu->mean_squared_error(pred.cf(), target.cf(), n, d.cf(), stc.as<double>(), 2 * n);
    gpu->mean_squared_error(pred.gf(), target.gf(), n, d.gf(), stg.as<double>(), 2 * n);
    const auto dc = host(*cpu, d.c.as<void>(), n), dg = host(*gpu, d.g.as<void>(), n);
    EXPECT_EQ(0, std::memcmp(dc.data(), dg.data(), std::size_t(n) * 4)) << tag << " dpred";
    const auto sc = host<double>(*cpu, stc.as<void>(), 2),
               sg = host<double>(*gpu, stg.as<void>(), 2);
    EXPECT_NEAR(sg[0], sc[0], 1e-12 * n * std::fabs(sc[0])) << tag << " squared errors";
    EXPECT_NEAR(sg[1], sc[1], 1e-12 * n * std::fabs(sc[1])) << tag << " absolute errors";
  }
}

// The loop's path on the GPU (uploads, gathers, the loss, evaluation graphs of a regression set).
// fp32 GEMMs sum in another order than OpenBLAS, so the runs agree to a tolerance.
TEST_F(CudaRegression, ARunEndsWhereTheCpuRunEnds) {
  TrainConfig c;
  c.data = test::synthetic_regression_data();
  c.model.preset = Preset::mlp;
  c.training.batch_size = 32;
  c.training.epochs = 5;
  c.training.learning_rate = 0.02;
  c.device = DeviceSpec{DeviceKind::cpu, 0, 0};
  struct Quiet : TrainCallback {
  } quiet;
  const TrainResult on_cpu = train(c, quiet);
  c.device = DeviceSpec{DeviceKind::cuda, 0, 0};
  c.training.deterministic = true;
  const TrainResult on_gpu = train(c, quiet);
  ASSERT_EQ(on_gpu.state, RunState::completed) << on_gpu.message;
  EXPECT_TRUE(on_gpu.regression);
  EXPECT_NEAR(on_gpu.final_val_rmse, on_cpu.final_val_rmse, 0.02 * on_cpu.final_val_rmse);
  EXPECT_NEAR(on_gpu.final_val_r2, on_cpu.final_val_r2, 0.01);
}

}  // namespace
}  // namespace sweep::trainer
