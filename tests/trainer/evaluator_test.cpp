/*
 * evaluator_test.cpp — the regression side of EvalResult and combine(): RMSE, MAE and R^2 of
 * parts merged equal those of the whole (the targets' variance merged without cancellation, even
 * for targets of large mean), and an Evaluator's pass over a regression set on the CPU backend
 * against sums taken here.
 */
#include "trainer/eval/evaluator.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "trainer/train_config.h"

namespace sweep::trainer {
namespace {

// An EvalResult for predictions `pred` of `targets`, as a pass would leave it.
EvalResult by_hand(const std::vector<double>& pred, const std::vector<double>& targets) {
  EvalResult r;
  r.regression = true;
  r.images = std::int64_t(targets.size());
  double sse = 0, sae = 0, mean = 0, m2 = 0;
  for (std::size_t i = 0; i < targets.size(); ++i) {
    sse += (pred[i] - targets[i]) * (pred[i] - targets[i]);
    sae += std::fabs(pred[i] - targets[i]);
    mean += targets[i];
  }
  mean /= double(targets.size());
  for (const double t : targets) m2 += (t - mean) * (t - mean);
  r.loss = sse / double(targets.size());
  r.mae = sae / double(targets.size());
  r.target_mean = mean;
  r.target_m2 = m2;
  return r;
}

TEST(EvalResult, RegressionPartsCombineToTheWhole) {
  std::mt19937_64 rng(3);
  std::normal_distribution<double> noise(0, 1);
  for (const double offset : {0.0, 1e8}) {  // 1e8: sums of squares would cancel
    std::vector<double> pred, targets;
    for (int i = 0; i < 101; ++i) {
      targets.push_back(offset + 3 * noise(rng));
      pred.push_back(targets.back() + noise(rng));
    }
    const EvalResult whole = by_hand(pred, targets);
    const auto slice = [&](int a, int b) {
      return by_hand({pred.begin() + a, pred.begin() + b},
                     {targets.begin() + a, targets.begin() + b});
    };
    const EvalResult merged = combine({slice(0, 30), slice(30, 31), slice(31, 101)});
    EXPECT_TRUE(merged.regression);
    EXPECT_EQ(merged.images, 101);
    EXPECT_NEAR(merged.rmse(), whole.rmse(), 1e-12 * whole.rmse());
    EXPECT_NEAR(merged.mae, whole.mae, 1e-12 * whole.mae);
    EXPECT_NEAR(merged.r2(), whole.r2(), 1e-9) << "offset " << offset;
    EXPECT_GT(whole.r2(), 0.8);  // noise of sd 1 on targets of sd 3: R^2 about 0.9
    EXPECT_LT(whole.r2(), 0.95);
  }
}

TEST(EvalResult, RSquaredOfConstantTargetsIsZero) {
  const EvalResult r = by_hand({1, 2, 3}, {2, 2, 2});
  EXPECT_EQ(r.r2(), 0.0);
  EXPECT_NEAR(r.rmse(), std::sqrt(2.0 / 3.0), 1e-15);
}

// A whole pass: a network of one dense output over a float regression set.
TEST(Evaluator, RegressionPassMatchesSumsTakenHere) {
  auto cpu = make_backend(DeviceSpec{DeviceKind::cpu, 0, 1});
  Dataset d;
  d.source = "eval";
  d.c = 2;
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<float> u(-1, 1);
  for (int i = 0; i < 37; ++i) {  // batches of 8: a partial last one
    d.features.push_back(u(rng));
    d.features.push_back(u(rng));
    d.targets.push_back(u(rng) * 5 + 10);
  }
  ModelSpec model;
  model.preset = Preset::none;
  model.layers = {LayerSpec{LayerKind::flatten, {}, {}}};
  Network net(*cpu, model, Shape{2, 1, 1}, 0, 8, 1);
  const std::vector<float> w = {0.5f, -0.25f, 9.f};  // y = 0.5 x0 - 0.25 x1 + 9
  ASSERT_EQ(net.param_count(), 3u);
  cpu->copy_to_device(net.params(), w.data(), sizeof(float) * 3);
  Evaluator eval(*cpu, d, identity_stats(d), 8);
  DeviceBuffer x(*cpu, 8 * 2 * sizeof(float));
  eval.launch(net, x.f(), true);
  const EvalResult r = eval.collect();
  std::vector<double> pred, targets;
  for (std::size_t i = 0; i < 37; ++i) {
    pred.push_back(double(0.5f * d.features[2 * i] + -0.25f * d.features[2 * i + 1] + 9.f));
    targets.push_back(d.targets[i]);
  }
  const EvalResult expect = by_hand(pred, targets);
  EXPECT_TRUE(r.regression);
  EXPECT_TRUE(r.confusion.empty());
  EXPECT_NEAR(r.loss, expect.loss, 1e-5 * expect.loss);
  EXPECT_NEAR(r.mae, expect.mae, 1e-5 * expect.mae);
  EXPECT_NEAR(r.r2(), expect.r2(), 1e-5);
}

}  // namespace
}  // namespace sweep::trainer
