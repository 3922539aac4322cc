// Metric series: NaN/Inf, idempotent rewrites, one-pass reads, latest values, best trial, batcher.
#include <gmock/gmock.h>

#include <cmath>
#include <limits>
#include <thread>

#include "store/metric_batcher.h"
#include "store_test_util.h"

namespace sweep::test {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

struct MetricsFixture : ::testing::Test {
  TempDir dir;
  Store store{dir / "sweep.db"};
  std::int64_t sweep_id = store.create_sweep(sweep_spec("m"));
  std::vector<std::int64_t> ids = store.add_trials(sweep_id, trial_specs(3));
};

TEST_F(MetricsFixture, NanAndInfinitiesSurviveTheRoundTrip) {
  store.log_metrics(std::vector<MetricPoint>{
      point(ids[0], "train_loss", 0, 2.5), point(ids[0], "train_loss", 1, kNaN),
      point(ids[0], "train_loss", 2, kInf), point(ids[0], "train_loss", 3, -kInf),
      point(ids[0], "train_loss", 4, -0.0)});
  const auto pts = store.trial_metrics(ids[0]);
  ASSERT_EQ(pts.size(), 5u);
  EXPECT_EQ(pts[0].value, 2.5);
  EXPECT_TRUE(std::isnan(pts[1].value));
  EXPECT_EQ(pts[2].value, kInf);
  EXPECT_EQ(pts[3].value, -kInf);
  EXPECT_EQ(pts[4].value, 0.0);
  EXPECT_EQ(pts[0].epoch, 0.0);
  EXPECT_EQ(pts[3].wall_time, 1.7e9 + 3);
}

TEST_F(MetricsFixture, RewritingAPointReplacesItInsteadOfDuplicating) {
  store.log_metric(point(ids[1], "val_accuracy", 5, 0.5));
  auto again = point(ids[1], "val_accuracy", 5, 0.75);  // after a crash-resume
  again.epoch = 5.5;
  store.log_metric(again);
  store.log_metric(again);
  const auto pts = store.trial_metrics(ids[1]);
  ASSERT_EQ(pts.size(), 1u);
  EXPECT_EQ(pts[0].value, 0.75);
  EXPECT_EQ(pts[0].epoch, 5.5);
  // A finite value may become NaN and back, keeping value and kind consistent.
  store.log_metric(point(ids[1], "val_accuracy", 5, kNaN));
  EXPECT_TRUE(std::isnan(store.trial_metrics(ids[1])[0].value));
  store.log_metric(point(ids[1], "val_accuracy", 5, 0.25));
  EXPECT_EQ(store.trial_metrics(ids[1])[0].value, 0.25);
}

TEST_F(MetricsFixture, ABatchWithABadPointWritesNothing) {
  std::vector<MetricPoint> batch = {point(ids[0], "loss", 0, 1.0), point(ids[0], "loss", 1, 0.9),
                                    point(987654, "loss", 0, 1.0)};  // no such trial
  EXPECT_THROW(store.log_metrics(batch), Error);
  EXPECT_TRUE(store.trial_metrics(ids[0]).empty()) << "half of a failed batch was committed";
  EXPECT_THROW(store.log_metric(point(ids[0], "", 0, 1.0)), Error);
}

TEST_F(MetricsFixture, SweepMetricsComeInOnePassOrderedByTrialNameStep) {
  // Written out of order, across trials.
  store.log_metrics(std::vector<MetricPoint>{
      point(ids[2], "val_accuracy", 1, 0.3), point(ids[0], "val_accuracy", 2, 0.6),
      point(ids[0], "train_loss", 1, 1.0), point(ids[0], "val_accuracy", 1, 0.4),
      point(ids[2], "val_accuracy", 0, 0.2)});
  const auto pts = store.metrics(sweep_id);
  ASSERT_EQ(pts.size(), 5u);
  std::vector<std::tuple<std::int64_t, std::string, std::int64_t>> keys;
  for (const auto& p : pts) keys.emplace_back(p.trial_id, p.name, p.step);
  EXPECT_THAT(keys, ::testing::ElementsAre(std::make_tuple(ids[0], "train_loss", 1),
                                           std::make_tuple(ids[0], "val_accuracy", 1),
                                           std::make_tuple(ids[0], "val_accuracy", 2),
                                           std::make_tuple(ids[2], "val_accuracy", 0),
                                           std::make_tuple(ids[2], "val_accuracy", 1)));
  std::size_t visited = 0;
  store.for_each_metric(sweep_id, [&](const MetricPoint& p) {
    EXPECT_EQ(p.step, pts[visited].step);
    ++visited;
  });
  EXPECT_EQ(visited, 5u);

  const auto latest = store.latest_metrics(sweep_id);
  ASSERT_EQ(latest.size(), 3u);
  EXPECT_EQ(latest[0].name, "train_loss");
  EXPECT_EQ(latest[1].step, 2);
  EXPECT_EQ(latest[1].value, 0.6);
  EXPECT_EQ(latest[2].trial_id, ids[2]);
  EXPECT_EQ(latest[2].value, 0.3);
}

TEST_F(MetricsFixture, BestTrialFollowsTheGoalAndIgnoresNonFiniteValues) {
  EXPECT_FALSE(store.best_trial(sweep_id).has_value());
  store.log_metrics(std::vector<MetricPoint>{
      point(ids[0], "val_accuracy", 1, 0.80), point(ids[0], "val_accuracy", 2, 0.70),
      point(ids[1], "val_accuracy", 1, kInf),  // not a real accuracy: ignored
      point(ids[1], "val_accuracy", 2, 0.85), point(ids[2], "val_accuracy", 1, 0.85),
      point(ids[2], "train_loss", 1, 99.0)});
  const auto best = store.best_trial(sweep_id);
  ASSERT_TRUE(best.has_value());
  EXPECT_EQ(best->trial.number, 2);  // 0.85 at step 1 beats 0.85 at step 2
  EXPECT_EQ(best->value, 0.85);
  EXPECT_EQ(best->step, 1);

  const auto min_sweep = store.create_sweep(sweep_spec("min", MetricGoal::minimize));
  const auto min_ids = store.add_trials(min_sweep, trial_specs(2));
  store.log_metrics(std::vector<MetricPoint>{point(min_ids[0], "val_accuracy", 1, 0.3),
                                             point(min_ids[1], "val_accuracy", 1, 0.2),
                                             point(min_ids[1], "val_accuracy", 2, kNaN)});
  EXPECT_EQ(store.best_trial(min_sweep)->trial.number, 1);
  EXPECT_EQ(store.best_trial(min_sweep)->value, 0.2);
  EXPECT_THROW(store.best_trial(4242), Error);
}

// "failed and diverged trials rank worst" (docs/search.md): a trial that diverged after a high
// value, or failed after one, is not the best while any other trial has a value.
TEST_F(MetricsFixture, BestTrialRanksFailedAndDivergedTrialsLast) {
  store.log_metrics(std::vector<MetricPoint>{point(ids[0], "val_accuracy", 1, 0.96),
                                             point(ids[1], "val_accuracy", 1, 0.60),
                                             point(ids[2], "val_accuracy", 1, 0.97)});
  ASSERT_TRUE(store.set_trial_state(ids[0], TrialState::running));
  ASSERT_TRUE(store.set_trial_state(ids[0], TrialState::diverged));
  ASSERT_TRUE(store.set_trial_state(ids[2], TrialState::running));
  ASSERT_TRUE(store.set_trial_state(ids[2], TrialState::failed));
  EXPECT_EQ(store.best_trial(sweep_id)->trial.number, 1);
  ASSERT_TRUE(store.set_trial_state(ids[1], TrialState::running));
  ASSERT_TRUE(store.set_trial_state(ids[1], TrialState::failed));
  EXPECT_EQ(store.best_trial(sweep_id)->trial.number, 2);  // all broken: the best value
}

TEST_F(MetricsFixture, BatcherWritesEverythingFromManyThreads) {
  constexpr int kThreads = 4, kPerThread = 2500;
  {
    MetricBatcher batcher(store, {.max_rows = 300, .max_delay = std::chrono::milliseconds(5)});
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
      threads.emplace_back([&, t] {
        const std::string name = std::string(1, 'm').append(std::to_string(t));
        for (int i = 0; i < kPerThread; ++i)
          batcher.add(point(ids[static_cast<std::size_t>(t % 3)], name, i, i));
      });
    for (auto& th : threads) th.join();
    batcher.flush();
    EXPECT_EQ(batcher.points_written(), static_cast<std::uint64_t>(kThreads * kPerThread));
    EXPECT_EQ(store.metrics(sweep_id).size(), static_cast<std::size_t>(kThreads * kPerThread));
    batcher.add(point(ids[0], "after_flush", 0, 1.0));  // written by the destructor
  }
  EXPECT_EQ(store.trial_metrics(ids[0]).back().name, "m3");
  EXPECT_EQ(store.metrics(sweep_id).size(), static_cast<std::size_t>(kThreads * kPerThread + 1));
}

TEST_F(MetricsFixture, BatcherWritesOnItsTimerWithoutAFlush) {
  MetricBatcher batcher(store, {.max_rows = 100'000, .max_delay = std::chrono::milliseconds(10)});
  batcher.add(point(ids[0], "loss", 0, 1.0));
  for (int i = 0; i < 500 && batcher.points_written() == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(batcher.points_written(), 1u);
}

TEST_F(MetricsFixture, BatcherReportsAFailedBatchAtTheNextFlush) {
  MetricBatcher batcher(store, {.max_rows = 10, .max_delay = std::chrono::milliseconds(5)});
  batcher.add(point(987654, "loss", 0, 1.0));  // no such trial: the batch fails
  EXPECT_THROW(batcher.flush(), Error);
  batcher.add(point(ids[0], "loss", 0, 1.0));  // the batcher goes on working afterwards
  EXPECT_NO_THROW(batcher.flush());
  EXPECT_EQ(store.trial_metrics(ids[0]).size(), 1u);
}

}  // namespace
}  // namespace sweep::test
