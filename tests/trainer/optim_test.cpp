/*
 * optim_test.cpp — the Optimizer (spec → OptimizerStep → one backend launch) against steps worked
 * out by hand: sgdm, nesterov, adam, rmsprop, weight decay, and global-norm clipping.
 *
 * Runs on the CPU backend. Each expected value is written as the arithmetic of the update rule in
 * backend.h, one step per line, so the test documents the semantics as well as checking them.
 */
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "common/check.h"
#include "trainer/backend/backend.h"
#include "trainer/optim/optimizer.h"

namespace sweep::trainer {
namespace {

class OptimTest : public ::testing::Test {
 protected:
  void SetUp() override { backend_ = make_backend(DeviceSpec{DeviceKind::cpu, 0, 1}); }

  // Runs one step per entry of `grads_per_step` from params `p0`; returns params after each step.
  std::vector<std::vector<float>> run(const TrainingSpec& spec, std::vector<float> p0,
                                      const std::vector<std::vector<float>>& grads_per_step,
                                      double lr) {
    const std::size_t n = p0.size();
    DeviceBuffer params(*backend_, n * sizeof(float)), grads(*backend_, n * sizeof(float));
    backend_->copy_to_device(params.f(), p0.data(), n * sizeof(float));
    Optimizer opt(*backend_, spec, n);
    std::vector<std::vector<float>> out;
    for (const auto& g : grads_per_step) {
      backend_->copy_to_device(grads.f(), g.data(), n * sizeof(float));
      opt.step(params.f(), grads.f(), lr);
      std::vector<float> now(n);
      backend_->copy_to_host(now.data(), params.f(), n * sizeof(float));
      out.push_back(now);
    }
    EXPECT_EQ(opt.steps_taken(), std::int64_t(grads_per_step.size()));
    return out;
  }

  std::unique_ptr<Backend> backend_;
};

TrainingSpec sgdm(double momentum, double wd = 0, bool nesterov = false) {
  TrainingSpec s;
  s.optimizer = sweep::trainer::OptimizerKind::sgdm;
  s.momentum = momentum;
  s.weight_decay = wd;
  s.nesterov = nesterov;
  return s;
}

TEST_F(OptimTest, SgdMomentum) {
  const auto p = run(sgdm(0.9), {1.0f, -2.0f}, {{0.5f, 0.25f}, {0.5f, 0.25f}, {0.5f, 0.25f}}, 0.1);
  // v1 = 0.5            p1 = 1 - 0.1*0.5 = 0.95
  // v2 = 0.45 + 0.5     p2 = 0.95 - 0.1*0.95 = 0.855
  // v3 = 0.855 + 0.5    p3 = 0.855 - 0.1*1.355 = 0.7195
  EXPECT_NEAR(p[0][0], 0.95, 1e-6);
  EXPECT_NEAR(p[1][0], 0.855, 1e-6);
  EXPECT_NEAR(p[2][0], 0.7195, 1e-6);
  // second parameter: v = 0.25, 0.475, 0.6775
  EXPECT_NEAR(p[0][1], -2.025, 1e-6);
  EXPECT_NEAR(p[1][1], -2.0725, 1e-6);
  EXPECT_NEAR(p[2][1], -2.14025, 1e-6);
}

TEST_F(OptimTest, SgdMomentumWithWeightDecay) {
  const auto p = run(sgdm(0.9, 0.1), {1.0f}, {{0.5f}, {0.5f}, {0.5f}}, 0.1);
  // g1 = 0.5 + 0.1*1 = 0.6          v1 = 0.6                      p1 = 1 - 0.06 = 0.94
  // g2 = 0.5 + 0.1*0.94 = 0.594     v2 = 0.54 + 0.594 = 1.134     p2 = 0.94 - 0.1134 = 0.8266
  // g3 = 0.5 + 0.08266 = 0.58266    v3 = 1.0206 + 0.58266 = 1.60326  p3 = 0.8266 - 0.160326
  EXPECT_NEAR(p[0][0], 0.94, 1e-6);
  EXPECT_NEAR(p[1][0], 0.8266, 1e-6);
  EXPECT_NEAR(p[2][0], 0.666274, 1e-6);
}

TEST_F(OptimTest, Nesterov) {
  const auto p = run(sgdm(0.9, 0, true), {1.0f}, {{0.5f}, {0.5f}, {0.5f}}, 0.1);
  // v1 = 0.5     p1 = 1 - 0.1*(0.5 + 0.45) = 0.905
  // v2 = 0.95    p2 = 0.905 - 0.1*(0.5 + 0.855) = 0.7695
  // v3 = 1.355   p3 = 0.7695 - 0.1*(0.5 + 1.2195) = 0.59755
  EXPECT_NEAR(p[0][0], 0.905, 1e-6);
  EXPECT_NEAR(p[1][0], 0.7695, 1e-6);
  EXPECT_NEAR(p[2][0], 0.59755, 1e-6);
}

TEST_F(OptimTest, AdamWithBiasCorrection) {
  TrainingSpec s;
  s.optimizer = sweep::trainer::OptimizerKind::adam;
  const auto p = run(s, {1.0f}, {{0.5f}, {-0.5f}, {-0.5f}}, 0.1);
  // t1: m = 0.05, v = 0.00025; m^ = 0.5, v^ = 0.25 -> p = 1 - 0.1*0.5/0.5 = 0.9
  EXPECT_NEAR(p[0][0], 0.9, 1e-6);
  // t2: m = 0.045 - 0.05 = -0.005, v = 0.00024975 + 0.00025 = 0.00049975
  //     m^ = -0.005/0.19, v^ = 0.00049975/0.001999 = 0.25 -> p = 0.9 + 0.1*(0.005/0.19)/0.5
  const double p2 = 0.9 + 0.1 * (0.005 / 0.19) / 0.5;
  EXPECT_NEAR(p[1][0], p2, 1e-6);
  // t3: m = -0.0045 - 0.05 = -0.0545, v = 0.999*0.00049975 + 0.00025
  const double m3 = -0.0545, v3 = 0.999 * 0.00049975 + 0.00025;
  const double p3 =
      p2 - 0.1 * (m3 / (1 - 0.729)) / (std::sqrt(v3 / (1 - std::pow(0.999, 3))) + 1e-8);
  EXPECT_NEAR(p[2][0], p3, 1e-6);
}

TEST_F(OptimTest, RmsProp) {
  TrainingSpec s;
  s.optimizer = sweep::trainer::OptimizerKind::rmsprop;
  s.rms_decay = 0.99;
  const auto p = run(s, {1.0f}, {{0.5f}, {0.5f}, {-1.0f}}, 0.01);
  // s1 = 0.01*0.25 = 0.0025, sqrt = 0.05         p1 = 1 - 0.01*0.5/0.05 = 0.9
  // s2 = 0.002475 + 0.0025 = 0.004975             p2 = 0.9 - 0.005/sqrt(0.004975)
  // s3 = 0.99*0.004975 + 0.01*1                   p3 = p2 + 0.01/sqrt(s3)
  const double p2 = 0.9 - 0.005 / std::sqrt(0.004975);
  const double p3 = p2 + 0.01 / std::sqrt(0.99 * 0.004975 + 0.01);
  EXPECT_NEAR(p[0][0], 0.9, 1e-6);
  EXPECT_NEAR(p[1][0], p2, 1e-6);
  EXPECT_NEAR(p[2][0], p3, 1e-6);
}

TEST_F(OptimTest, GlobalNormClipping) {
  TrainingSpec s = sgdm(0.0);
  s.gradient_clip = 1.0;
  // |g| = 5 > 1: g is scaled by 1 / (5 + 1e-6) before the update; with lr 1 the step is g / 5.
  auto p = run(s, {0.f, 0.f}, {{3.f, 4.f}, {0.3f, 0.4f}}, 1.0);
  EXPECT_NEAR(p[0][0], -0.6, 1e-5);
  EXPECT_NEAR(p[0][1], -0.8, 1e-5);
  // |g| = 0.5 < 1: no scaling.
  EXPECT_NEAR(p[1][0], -0.9, 1e-5);
  EXPECT_NEAR(p[1][1], -1.2, 1e-5);

  // Weight decay is added after clipping (clipping sees the loss gradient only, as
  // torch.nn.utils.clip_grad_norm_ before optimizer.step does).
  s.weight_decay = 0.5;
  p = run(s, {2.f, 0.f}, {{3.f, 4.f}}, 1.0);
  EXPECT_NEAR(p[0][0], 2 - (0.6 + 0.5 * 2), 1e-5);
  EXPECT_NEAR(p[0][1], -0.8, 1e-5);
}

TEST_F(OptimTest, BadSpecsAreErrors) {
  TrainingSpec s = sgdm(1.5);
  EXPECT_THROW(Optimizer(*backend_, s, 4), Error);
  s = sgdm(0.9);
  s.gradient_clip = -1;
  EXPECT_THROW(Optimizer(*backend_, s, 4), Error);
}

// A hand-built spec meets the YAML reader's ranges (trainer/config_keys.h), in the reader's words.
TEST_F(OptimTest, RefusesWhatTheReaderRefusesInItsWords) {
  const auto message = [&](const TrainingSpec& spec) -> std::string {
    try {
      Optimizer(*backend_, spec, 4);
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  };
  TrainingSpec s = sgdm(0.9);
  s.learning_rate = 0;
  EXPECT_EQ(message(s), "key 'training.learning_rate': must be > 0, got 0");
  s = sgdm(1);
  EXPECT_EQ(message(s), "key 'training.momentum': must be in [0, 1), got 1");
  s = sgdm(0.9);
  s.epsilon = 0;
  EXPECT_EQ(message(s), "key 'training.epsilon': must be > 0, got 0");
  s = sgdm(0, 0, true);
  EXPECT_EQ(message(s), "key 'training.nesterov': needs momentum > 0");
  EXPECT_EQ(message(sgdm(0.9)), "");
}

}  // namespace
}  // namespace sweep::trainer
