// Stopping policies on scripted metric curves; every expected decision is worked out by hand in
// the comments next to it.
#include <gtest/gtest.h>

#include "common/check.h"
#include "common/json.h"
#include "test_helpers.h"

namespace sweep::scheduler {
namespace {

MetricPoint at(double value, std::int64_t epoch, const std::string& name = "val_accuracy") {
  return MetricPoint{name, value, epoch, epoch, 1.0};
}

// ---- median ----------------------------------------------------------------------------------

TEST(MedianRule, StopsBestSoFarBelowMedianOfOthersRunningAverages) {
  MedianStoppingRule rule({"val_accuracy", MetricGoal::maximize, /*min_epochs=*/1,
                           /*min_trials=*/2});
  // A and B run first: fewer than 2 other trials at each epoch, so no decision.
  for (auto [e, v] : {std::pair{1, 0.5}, {2, 0.6}, {3, 0.7}})
    EXPECT_FALSE(rule.observe(1, at(v, e)).stop);
  for (auto [e, v] : {std::pair{1, 0.4}, {2, 0.5}, {3, 0.6}})
    EXPECT_FALSE(rule.observe(2, at(v, e)).stop);
  // C at epoch 1: others' running averages by epoch 1 are A 0.5, B 0.4 → median 0.45 > 0.3.
  const StopDecision c = rule.observe(3, at(0.3, 1));
  EXPECT_TRUE(c.stop);
  EXPECT_EQ(c.reason,
            "median: best val_accuracy 0.3 by epoch 1 is worse than the median 0.45 of 2 other "
            "trials' running averages");
  // D at epoch 1: others A 0.5, B 0.4, C 0.3 → median 0.4 < 0.46: continue.
  EXPECT_FALSE(rule.observe(4, at(0.46, 1)).stop);
  // D at epoch 2: only A and B reached epoch 2; their averages (0.5+0.6)/2 = 0.55 and
  // (0.4+0.5)/2 = 0.45 → median 0.5 > D's best 0.47: stop.
  EXPECT_TRUE(rule.observe(4, at(0.47, 2)).stop);
  // E at epoch 1: others A .5, B .4, C .3, D .46 → median (.4 + .46)/2 = .43 < .45: continue.
  EXPECT_FALSE(rule.observe(5, at(0.45, 1)).stop);
}

TEST(MedianRule, UsesBestSoFarNotTheLatestValue) {
  MedianStoppingRule rule({"val_accuracy", MetricGoal::maximize, 1, 1});
  rule.observe(1, at(0.5, 1));
  rule.observe(1, at(0.5, 2));
  EXPECT_FALSE(rule.observe(2, at(0.9, 1)).stop);  // others: A 0.5 → median 0.5
  // At epoch 2 B's latest is 0.2 but its best so far is 0.9 > median 0.5 → continue.
  EXPECT_FALSE(rule.observe(2, at(0.2, 2)).stop);
}

TEST(MedianRule, RespectsGraceAndMinimize) {
  MedianStoppingRule rule({"loss", MetricGoal::minimize, /*min_epochs=*/2, /*min_trials=*/1});
  rule.observe(1, at(1.0, 1, "loss"));
  rule.observe(1, at(0.5, 2, "loss"));
  EXPECT_FALSE(rule.observe(2, at(5.0, 1, "loss")).stop);  // epoch 1 < min_epochs
  // Epoch 2: other's running average (1.0 + 0.5)/2 = 0.75; B's best is min(5, 0.7) = 0.7 → keep.
  EXPECT_FALSE(rule.observe(2, at(0.7, 2, "loss")).stop);
  // C: best min(5, 0.8) = 0.8; others by epoch 2: A 0.75, B (5+0.7)/2 = 2.85 → median 1.8 → keep.
  rule.observe(3, at(5.0, 1, "loss"));
  EXPECT_FALSE(rule.observe(3, at(0.8, 2, "loss")).stop);
  // D: best min(3.0, 3.1) = 3.0; others by epoch 2: A 0.75, B 2.85, C 2.9 → median 2.85 → stop.
  rule.observe(4, at(3.0, 1, "loss"));
  EXPECT_TRUE(rule.observe(4, at(3.1, 2, "loss")).stop);
}

TEST(MedianRule, IgnoresOtherMetricsNaNAndEpochZero) {
  MedianStoppingRule rule({"val_accuracy", MetricGoal::maximize, 1, 1});
  rule.observe(1, at(0.9, 1));
  EXPECT_FALSE(rule.observe(2, at(0.1, 1, "loss")).stop);
  EXPECT_FALSE(rule.observe(2, at(std::nan(""), 1)).stop);
  EXPECT_FALSE(rule.observe(2, at(0.1, 0)).stop);
  EXPECT_TRUE(rule.observe(2, at(0.1, 1)).stop);
}

// ---- ASHA ------------------------------------------------------------------------------------

TEST(Asha, RungsAreMinEpochsTimesPowersOfEtaBelowMax) {
  AshaRule unbounded({"val_accuracy", MetricGoal::maximize, 1, 3, 0});
  EXPECT_EQ(unbounded.rungs_through(100), (std::vector<std::int64_t>{1, 3, 9, 27, 81}));
  AshaRule capped({"val_accuracy", MetricGoal::maximize, 2, 2, 16});
  EXPECT_EQ(capped.rungs_through(100), (std::vector<std::int64_t>{2, 4, 8}));
}

TEST(Asha, KeepsOnlyTheTopOneOverEtaAtEachRung) {
  AshaRule rule({"val_accuracy", MetricGoal::maximize, /*min_epochs=*/1, /*eta=*/3, 0});
  // Rung 0 (epoch 1); keep = max(1, floor(n/3)).
  EXPECT_FALSE(rule.observe(1, at(0.5, 1)).stop);       // n=1 rank 1 keep 1
  EXPECT_FALSE(rule.observe(2, at(0.6, 1)).stop);       // n=2 rank 1 keep 1
  const StopDecision t3 = rule.observe(3, at(0.4, 1));  // n=3 rank 3 keep 1
  EXPECT_TRUE(t3.stop);
  EXPECT_EQ(t3.reason, "asha: rung 0 (epoch 1) not in top 1/3 (val_accuracy 0.4 ranks 3 of 3)");
  EXPECT_TRUE(rule.observe(4, at(0.55, 1)).stop);   // n=4 rank 2 keep 1
  EXPECT_FALSE(rule.observe(5, at(0.7, 1)).stop);   // n=5 rank 1
  EXPECT_TRUE(rule.observe(6, at(0.58, 1)).stop);   // n=6: .6 .7 better → rank 3 > keep 2
  EXPECT_FALSE(rule.observe(7, at(0.65, 1)).stop);  // n=7: .7 better → rank 2 = keep 2
  // Between rungs nothing is judged; a rung is judged once per trial.
  EXPECT_FALSE(rule.observe(1, at(0.45, 2)).stop);
  EXPECT_FALSE(rule.observe(1, at(0.1, 1)).stop);
  // Rung 1 (epoch 3).
  EXPECT_FALSE(rule.observe(1, at(0.52, 3)).stop);      // n=1
  const StopDecision t2 = rule.observe(2, at(0.5, 3));  // n=2 rank 2 keep 1
  EXPECT_TRUE(t2.stop);
  EXPECT_EQ(t2.reason.rfind("asha: rung 1 (epoch 3) not in top 1/3", 0), 0u);
  // A trial whose first report is past two rungs is recorded (and judged) at both.
  EXPECT_FALSE(rule.observe(8, at(0.9, 3)).stop);  // rung 0: n=8 rank 1; rung 1: n=3 rank 1
  // Ties count in the trial's favour: .7 ties T5; only T8's .9 is better → rank 2 <= keep 3.
  EXPECT_FALSE(rule.observe(9, at(0.7, 1)).stop);
}

TEST(Asha, MinimizeGoal) {
  AshaRule rule({"loss", MetricGoal::minimize, 2, 2, 0});
  EXPECT_FALSE(rule.observe(1, at(0.5, 1, "loss")).stop);  // before the first rung
  EXPECT_FALSE(rule.observe(1, at(0.4, 2, "loss")).stop);  // rung 0: n=1
  EXPECT_TRUE(rule.observe(2, at(0.6, 2, "loss")).stop);   // n=2 rank 2 keep 1
  EXPECT_FALSE(rule.observe(3, at(0.3, 2, "loss")).stop);  // n=3 rank 1 keep 1
}

// ---- Hyperband (W&B semantics) ----------------------------------------------------------------

TEST(Hyperband, BandsFollowWandbsTwoForms) {
  EXPECT_EQ(hyperband_bands_from_min_iter(3, 3, 100), (std::vector<std::int64_t>{3, 9, 27, 81}));
  EXPECT_EQ(hyperband_bands_from_max_iter(27, 3, 3), (std::vector<std::int64_t>{1, 3, 9}));
  EXPECT_EQ(hyperband_bands_from_max_iter(10, 3, 5), (std::vector<std::int64_t>{1, 3}));
  EXPECT_THROW(hyperband_bands_from_max_iter(2, 3, 1), Error);
}

TEST(Hyperband, ComparesBestSoFarWithTheBandThresholdAndReevaluates) {
  HyperbandRule rule({"val_accuracy", MetricGoal::maximize, {2, 4, 8}, /*eta=*/2});
  EXPECT_FALSE(rule.observe(1, at(0.5, 1)).stop);  // before band 2
  // Band 2 values sorted best first; threshold = value at index floor(n/2).
  EXPECT_FALSE(rule.observe(1, at(0.6, 2)).stop);  // [.6] → idx 0 → .6; best .6
  EXPECT_FALSE(rule.observe(2, at(0.3, 1)).stop);
  EXPECT_FALSE(rule.observe(2, at(0.4, 2)).stop);  // [.6 .4] → idx 1 → .4; best .4 (tie)
  rule.observe(3, at(0.2, 1));
  const StopDecision c = rule.observe(3, at(0.35, 2));  // [.6 .4 .35] → .4 > .35
  EXPECT_TRUE(c.stop);
  EXPECT_EQ(c.reason,
            "hyperband: best val_accuracy 0.35 is worse than band 2's threshold 0.4 (top 1/2 of "
            "3 trials at epoch 2)");
  EXPECT_FALSE(rule.observe(2, at(0.45, 3)).stop);  // band 2 still: .4 <= best .45
  EXPECT_FALSE(rule.observe(4, at(0.7, 2)).stop);   // [.7 .6 .4 .35] → idx 2 → .4
  EXPECT_FALSE(rule.observe(5, at(0.65, 2)).stop);  // [.7 .65 .6 .4 .35] → idx 2 → .6
  // The threshold tightened to .6: B, which passed band 2 before, is stopped at a later report.
  EXPECT_TRUE(rule.observe(2, at(0.45, 3)).stop);
}

// strict (W&B's key): the value AT the band decides, so a trial that peaked and fell back is
// stopped where the default (best so far) keeps it.
TEST(Hyperband, StrictComparesTheValueAtTheBandNotTheBestSoFar) {
  auto run = [](bool strict) {
    HyperbandOptions options{"val_accuracy", MetricGoal::maximize, {2}, /*eta=*/2};
    options.strict = strict;
    HyperbandRule rule(options);
    rule.observe(1, at(0.60, 2));
    rule.observe(2, at(0.50, 2));
    rule.observe(3, at(0.90, 1));         // peaked before the band...
    return rule.observe(3, at(0.40, 2));  // ...and fell back: band 2 [.6 .5 .4] → threshold .5
  };
  EXPECT_FALSE(run(false).stop);  // best so far .9 beats .5
  const StopDecision strict = run(true);
  EXPECT_TRUE(strict.stop);
  EXPECT_EQ(strict.reason,
            "hyperband: val_accuracy at band 2 0.4 is worse than band 2's threshold 0.5 (top 1/2 "
            "of 3 trials at epoch 2)");
}

// ---- factory ----------------------------------------------------------------------------------

TEST(StoppingFactory, BuildsEachTypeAndRejectsMistakes) {
  EXPECT_EQ(make_stopping_policy(Json{{"type", "asha"}, {"min_epochs", 1}, {"eta", 3}},
                                 "val_accuracy", MetricGoal::maximize)
                ->describe(),
            "asha(val_accuracy max, min_epochs=1, eta=3)");
  EXPECT_EQ(
      make_stopping_policy(Json{{"type", "median"}}, "loss", MetricGoal::minimize)->describe(),
      "median(loss min, min_epochs=1, min_trials=3)");
  EXPECT_EQ(make_stopping_policy(Json{{"type", "hyperband"}, {"min_iter", 3}}, "val_accuracy",
                                 MetricGoal::maximize)
                ->describe(),
            "hyperband(val_accuracy max, bands=3,9,27,81,243,729,..., eta=3)");
  EXPECT_EQ(make_stopping_policy(Json{{"type", "hyperband"}, {"min_iter", 1}, {"strict", true}},
                                 "loss", MetricGoal::minimize)
                ->describe(),
            "hyperband(loss min, bands=1,3,9,27,81,243,..., eta=3, strict)");
  auto message = [](const Json& block) {
    try {
      make_stopping_policy(block, "loss", MetricGoal::minimize);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message(Json{{"type", "asha"}, {"min_epoch", 1}}),
            "early_terminate: unknown key 'min_epoch' for type asha (accepted: eta, max_epochs, "
            "min_epochs, type)");
  EXPECT_EQ(message(Json{{"type", "bohb"}}),
            "early_terminate: unknown type 'bohb' (accepted: median, asha, hyperband)");
  EXPECT_EQ(message(Json{{"type", "asha"}, {"eta", 1}}), "early_terminate.eta must be >= 2, not 1");
  EXPECT_EQ(message(Json{{"type", "asha"}, {"eta", 2.5}}),
            "early_terminate.eta must be a whole number, not 2.5");
  EXPECT_EQ(message(Json{{"type", "hyperband"}, {"eta", 3}}),
            "early_terminate: hyperband needs min_iter (or max_iter and s), as in W&B");
  EXPECT_EQ(message(Json{{"type", "hyperband"}, {"min_iter", 1}, {"strict", "yes"}}),
            "early_terminate: hyperband's strict must be true or false");
  EXPECT_EQ(parse_metric_goal("maximize"), MetricGoal::maximize);
  EXPECT_THROW(parse_metric_goal("max"), Error);
}

// ---- through the executor ----------------------------------------------------------------------

TEST(StoppingWithExecutor, AshaStopsTheLaggardsOfASweep) {
  // One slot, so trials run one after another in submit order and the decisions are exact.
  Executor executor(cpu_options(1), {},
                    make_stopping_policy({{"type", "asha"}, {"min_epochs", 1}, {"eta", 2}},
                                         "val_accuracy", MetricGoal::maximize));
  auto curve = [](double start) {
    return [start](TrialContext& ctx) {
      int epoch = 0;
      while (epoch < 4 && !ctx.should_stop()) {
        ++epoch;
        ctx.report("val_accuracy", start + 0.01 * epoch, epoch, epoch);
      }
      return completed({{"epochs", epoch}});
    };
  };
  auto best = executor.submit(spec_with_id(1), curve(0.8));
  auto worse = executor.submit(spec_with_id(2), curve(0.5));  // rung 0: n=2 rank 2 keep 1 → stop
  auto better = executor.submit(spec_with_id(3), curve(0.9));
  EXPECT_EQ(best.outcome().state, TrialState::completed);
  const TrialOutcome stopped = worse.outcome();
  EXPECT_EQ(stopped.state, TrialState::stopped_early);
  EXPECT_EQ(stopped.summary.at("epochs"), 1);
  EXPECT_EQ(stopped.message.rfind("asha: rung 0 (epoch 1) not in top 1/2", 0), 0u);
  EXPECT_EQ(better.outcome().state, TrialState::completed);
}

// Hyperband's band at a trial's last epoch stops nothing: the trial trained every epoch it had,
// so it ends completed, not stopped_early. One epoch earlier, the same rule does stop it.
TEST(StoppingWithExecutor, NoRuleStopsATrialAtItsLastEpoch) {
  Executor executor(cpu_options(1), {},
                    make_stopping_policy({{"type", "hyperband"}, {"min_iter", 2}, {"eta", 2}},
                                         "val_accuracy", MetricGoal::maximize));
  auto curve = [](double start, int epochs) {
    return [start, epochs](TrialContext& ctx) {
      ctx.set_epochs(epochs);
      int epoch = 0;
      while (epoch < epochs && !ctx.should_stop()) {
        ++epoch;
        ctx.report("val_accuracy", start + 0.01 * epoch, epoch, epoch);
      }
      return completed({{"epochs", epoch}});
    };
  };
  executor.submit(spec_with_id(1), curve(0.8, 2)).wait();
  executor.submit(spec_with_id(2), curve(0.9, 2)).wait();
  // Band 2 (epoch 2): values 0.92, 0.82, 0.52 best first, threshold at floor(3/2) = 0.82, and
  // 0.52 is worse — but epoch 2 is this trial's last.
  const TrialOutcome last = executor.submit(spec_with_id(3), curve(0.5, 2)).outcome();
  EXPECT_EQ(last.state, TrialState::completed) << last.message;
  EXPECT_EQ(last.summary.at("epochs"), 2);
  // A trial with a third epoch to go is stopped at band 2: 0.92, 0.82, 0.52, 0.42 → threshold at
  // floor(4/2) = 0.52, and 0.42 is worse.
  const TrialOutcome longer = executor.submit(spec_with_id(4), curve(0.4, 3)).outcome();
  EXPECT_EQ(longer.state, TrialState::stopped_early);
  EXPECT_EQ(longer.summary.at("epochs"), 2);
  EXPECT_EQ(longer.message.rfind("hyperband: best val_accuracy 0.42 is worse than band 2", 0), 0u)
      << longer.message;
}

}  // namespace
}  // namespace sweep::scheduler
