// The history (best so far by trial number) and the parameter importance (random forest +
// Spearman) behind the report's two charts for model-based search, and their payload.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>

#include "common/json.h"
#include "reports/random_forest.h"
#include "reports/report.h"
#include "reports/report_model.h"
#include "reports/report_payload.h"
#include "tests/reports/synthetic_sweep.h"

namespace sweep::reports {
namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();

// A seeded uniform [0, 1) that is the same with every standard library.
class Draws {
 public:
  explicit Draws(std::uint64_t seed) : state_(seed) {}
  double uniform() {
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return static_cast<double>((z ^ (z >> 31)) >> 11) * 0x1.0p-53;
  }

 private:
  std::uint64_t state_;
};

struct RandomTrial {
  double lr = 0;
  int batch_size = 0;
  double momentum = 0;
  std::string optimizer;
};

// A random search of `n` completed trials: lr log-uniform in [1e-4, 1e-1], batch size one of
// 16..256, momentum uniform in [0.5, 0.99], optimizer sgd | adam | rmsprop; the metric (one
// value per trial, val_accuracy) is whatever `metric` says.
ReportData random_sweep(std::size_t n,
                        const std::function<double(const RandomTrial&, Draws&)>& metric,
                        std::uint64_t seed = 11) {
  ReportData data;
  data.name = "random";
  data.method = "random";
  Draws draws(seed);
  const int batches[] = {16, 32, 64, 128, 256};
  const char* const optimizers[] = {"sgd", "adam", "rmsprop"};
  for (std::size_t i = 0; i < n; ++i) {
    RandomTrial r;
    r.lr = std::pow(10.0, -4 + 3 * draws.uniform());
    r.batch_size = batches[static_cast<int>(draws.uniform() * 5)];
    r.momentum = 0.5 + 0.49 * draws.uniform();
    r.optimizer = optimizers[static_cast<int>(draws.uniform() * 3)];
    TrialData t;
    t.id = static_cast<std::int64_t>(100 + i);
    t.number = static_cast<std::int64_t>(i);
    t.state = TrialState::completed;
    t.params = {{"training.learning_rate", r.lr},
                {"training.batch_size", r.batch_size},
                {"training.momentum", r.momentum},
                {"training.optimizer", r.optimizer}};
    t.series["val_accuracy"].push_back({1, 1.0, metric(r, draws)});
    data.trials.push_back(std::move(t));
  }
  return data;
}

const ParamImportance& row_of(const ReportModel& model, const std::string& name) {
  for (const ParamImportance& row : model.importance.rows)
    if (model.swept[row.param].name == name) return row;
  throw std::runtime_error("no importance row for " + name);
}

double tiny_noise(Draws& draws) { return (draws.uniform() - 0.5) * 0.004; }

TEST(ParamImportance, TheParameterThatDrivesTheMetricRanksFirstAndNoiseNearZero) {
  // val_accuracy = f(lr) + tiny noise; batch size, momentum and optimizer are irrelevant.
  const ReportData data = random_sweep(80, [](const RandomTrial& r, Draws& d) {
    return 0.55 + 0.1 * std::log10(r.lr / 1e-4) + tiny_noise(d);
  });
  const ReportModel model = analyze(data);
  ASSERT_EQ(model.importance.rows.size(), 4u) << model.importance.reason;
  EXPECT_TRUE(model.importance.reason.empty());
  EXPECT_EQ(model.importance.completed, 80u);
  EXPECT_EQ(model.swept[model.importance.rows[0].param].name, "training.learning_rate");
  EXPECT_GT(row_of(model, "training.learning_rate").importance, 0.9);
  for (const char* noise : {"training.batch_size", "training.momentum", "training.optimizer"})
    EXPECT_LT(row_of(model, noise).importance, 0.05) << noise;
  double sum = 0;
  for (const ParamImportance& row : model.importance.rows) sum += row.importance;
  EXPECT_NEAR(sum, 1.0, 1e-9);
  for (std::size_t k = 1; k < model.importance.rows.size(); ++k)
    EXPECT_GE(model.importance.rows[k - 1].importance, model.importance.rows[k].importance);

  // The correlation: strong and positive for lr, weak for the noise, none for a category.
  ASSERT_TRUE(row_of(model, "training.learning_rate").spearman);
  EXPECT_GT(*row_of(model, "training.learning_rate").spearman, 0.95);
  ASSERT_TRUE(row_of(model, "training.batch_size").spearman);
  EXPECT_LT(std::abs(*row_of(model, "training.batch_size").spearman), 0.3);
  EXPECT_FALSE(row_of(model, "training.optimizer").spearman) << "categorical: no correlation";
}

TEST(ParamImportance, ANegativeDriverGetsANegativeCorrelationAlsoWhenMinimizing) {
  ReportData data = random_sweep(60, [](const RandomTrial& r, Draws& d) {
    return 2.0 - 0.3 * r.momentum * 10 + tiny_noise(d);  // loss falls as momentum rises
  });
  data.goal = Goal::minimize;
  const ReportModel model = analyze(data);
  ASSERT_FALSE(model.importance.rows.empty()) << model.importance.reason;
  EXPECT_EQ(model.swept[model.importance.rows[0].param].name, "training.momentum");
  EXPECT_GT(model.importance.rows[0].importance, 0.8);
  ASSERT_TRUE(model.importance.rows[0].spearman);
  EXPECT_LT(*model.importance.rows[0].spearman, -0.95);
}

TEST(ParamImportance, TheForestSeesAPeakThatTheCorrelationMisses) {
  // Accuracy peaks at lr 0.003 (the middle of the log range): not monotone, so Spearman is near
  // zero, but the forest still puts lr first.
  const ReportData data = random_sweep(100, [](const RandomTrial& r, Draws& d) {
    const double off = std::log10(r.lr / 0.003);
    return 0.9 - 0.1 * off * off + tiny_noise(d);
  });
  const ReportModel model = analyze(data);
  ASSERT_FALSE(model.importance.rows.empty()) << model.importance.reason;
  const ParamImportance& lr = row_of(model, "training.learning_rate");
  EXPECT_GT(lr.importance, 0.8);
  ASSERT_TRUE(lr.spearman);
  EXPECT_LT(std::abs(*lr.spearman), 0.4);
}

TEST(ParamImportance, ACategoricalDriverIsOneHotEncodedAndRanksFirst) {
  const ReportData data = random_sweep(60, [](const RandomTrial& r, Draws& d) {
    return (r.optimizer == "adam" ? 0.9 : r.optimizer == "sgd" ? 0.8 : 0.6) + tiny_noise(d);
  });
  const ReportModel model = analyze(data);
  ASSERT_FALSE(model.importance.rows.empty()) << model.importance.reason;
  const ParamImportance& optimizer = row_of(model, "training.optimizer");
  EXPECT_EQ(&optimizer, &model.importance.rows[0]);
  EXPECT_GT(optimizer.importance, 0.8);
  EXPECT_FALSE(optimizer.spearman);
}

TEST(ParamImportance, IsTheSameOnEveryRunAndInEveryReport) {
  const auto metric = [](const RandomTrial& r, Draws& d) {
    return 0.5 + 0.05 * std::log10(r.lr) + 0.1 * r.momentum + (d.uniform() - 0.5) * 0.05;
  };
  const ReportModel a = analyze(random_sweep(70, metric));
  const ReportModel b = analyze(random_sweep(70, metric));
  ASSERT_EQ(a.importance.rows.size(), b.importance.rows.size());
  for (std::size_t k = 0; k < a.importance.rows.size(); ++k) {
    EXPECT_EQ(a.importance.rows[k].param, b.importance.rows[k].param);
    EXPECT_EQ(a.importance.rows[k].importance, b.importance.rows[k].importance);  // bit for bit
    EXPECT_EQ(a.importance.rows[k].spearman, b.importance.rows[k].spearman);
  }
  const ReportData data = random_sweep(70, metric);
  EXPECT_EQ(build_payload(data, a)["importance"], build_payload(data, b)["importance"]);
}

TEST(ParamImportance, FewerThanFiveUsableTrialsGiveAReasonInsteadOfBars) {
  ReportData data = random_sweep(7, [](const RandomTrial& r, Draws&) { return r.lr; });
  data.trials[0].state = TrialState::failed;    // left out: failed
  data.trials[1].state = TrialState::diverged;  // left out: diverged
  data.trials[2].state = TrialState::running;   // left out: not finished
  const ReportModel model = analyze(data);
  EXPECT_TRUE(model.importance.rows.empty());
  EXPECT_EQ(model.importance.reason,
            "Parameter importance needs at least 5 completed or early-stopped trials with a finite "
            "val_accuracy; there are 4 so far.");
  const Json payload = build_payload(data, model);
  EXPECT_EQ(payload["importance"]["rows"], Json::array());
  EXPECT_EQ(payload["importance"]["reason"], model.importance.reason);

  // A fifth, stopped early, is enough: it counts at its value.
  data.trials[2].state = TrialState::stopped_early;
  const ReportModel five = analyze(data);
  EXPECT_FALSE(five.importance.rows.empty()) << five.importance.reason;
  EXPECT_EQ(five.importance.completed, 4u);
  EXPECT_EQ(five.importance.stopped_early, 1u);
  EXPECT_EQ(build_payload(data, five)["importance"]["reason"], nullptr);
}

TEST(ParamImportance, TrialsWithoutAFiniteValueAreLeftOut) {
  ReportData data = random_sweep(8, [](const RandomTrial& r, Draws&) { return r.lr; });
  for (std::size_t i = 0; i < 4; ++i) data.trials[i].series["val_accuracy"][0].value = kNaN;
  EXPECT_NE(analyze(data).importance.reason.find("there are 4 so far"), std::string::npos);
}

TEST(ParamImportance, NothingVariesOrTheMetricIsConstant) {
  ReportData same_params = random_sweep(6, [](const RandomTrial& r, Draws&) { return r.lr; });
  // The parameters vary only through a failed trial: nothing varies among the fitted ones.
  for (std::size_t i = 1; i < same_params.trials.size(); ++i)
    same_params.trials[i].params = same_params.trials[0].params;
  same_params.trials.push_back(same_params.trials[1]);
  same_params.trials.back().number = 99;
  same_params.trials.back().params["training.learning_rate"] = 0.5;
  same_params.trials.back().state = TrialState::failed;
  EXPECT_EQ(analyze(same_params).importance.reason,
            "No swept parameter varies across the 6 trials with a finite val_accuracy.");

  const ReportData flat = random_sweep(6, [](const RandomTrial&, Draws&) { return 0.5; });
  EXPECT_EQ(analyze(flat).importance.reason,
            "All 6 trials with a finite val_accuracy reached the same value: no parameter "
            "explains a difference.");

  ReportData none;
  EXPECT_EQ(analyze(none).importance.reason, "No trials yet.");
  none.trials.push_back(same_params.trials[0]);
  EXPECT_EQ(analyze(none).importance.reason,
            "No parameter was swept, so there is nothing to rank.");
}

TEST(ParamImportance, SpearmanMatchesHandComputedValuesWithTies) {
  // Ranks of y: 1, 2, 3.5, 5, 3.5 -> r = 8 / sqrt(10 * 9.5).
  EXPECT_NEAR(*spearman_correlation({1, 2, 3, 4, 5}, {5, 6, 7, 8, 7}), 8 / std::sqrt(95.0), 1e-12);
  // Ranks of x: 4, 1, 2.5, 2.5; of y: 1, 4, 2, 3 -> r = -4.5 / sqrt(4.5 * 5).
  EXPECT_NEAR(*spearman_correlation({3, 1, 2, 2}, {10, 30, 20, 25}), -4.5 / std::sqrt(22.5), 1e-12);
  EXPECT_NEAR(*spearman_correlation({1e-4, 1e-3, 1e-2}, {3, 2, 1}), -1, 1e-12);
  EXPECT_FALSE(spearman_correlation({1, 1, 1}, {1, 2, 3}));
  EXPECT_FALSE(spearman_correlation({1}, {1}));
}

TEST(RandomForest, SplitsOnTheFeatureThatSeparatesTheTarget) {
  // y is a step in feature 1; feature 0 is a permutation with no relation to it.
  std::vector<double> noise, step, y;
  for (int i = 0; i < 40; ++i) {
    noise.push_back((i * 17) % 40);
    step.push_back(i);
    y.push_back(i < 20 ? 0.0 : 1.0);
  }
  const std::vector<double> shares = forest_importance({noise, step}, y, {});
  EXPECT_NEAR(shares[1], 1.0, 1e-9);
  EXPECT_NEAR(shares[0], 0.0, 1e-9);
  EXPECT_EQ(forest_importance({noise}, std::vector<double>(40, 3.0), {}), std::vector<double>{0.0});
}

TEST(TrialHistory, BestSoFarFollowsTheGoalAndSkipsUnfinishedTrials) {
  const auto sweep_of = [](Goal goal, std::vector<std::pair<double, TrialState>> trials) {
    ReportData d;
    d.goal = goal;
    d.metric_name = "m";
    for (std::size_t i = 0; i < trials.size(); ++i) {
      TrialData t;
      t.number = static_cast<std::int64_t>(i);
      t.state = trials[i].second;
      t.params = {{"x", static_cast<int>(i)}};
      t.series["m"].push_back({1, 1.0, trials[i].first});
      d.trials.push_back(std::move(t));
    }
    return d;
  };
  const auto best_so_far = [](const ReportData& d) {
    std::vector<std::optional<double>> out;
    std::vector<std::size_t> trials;
    for (const HistoryPoint& h : analyze(d).history) {
      out.push_back(h.best_so_far);
      trials.push_back(h.trial);
    }
    return std::make_pair(out, trials);
  };
  using S = TrialState;
  // Maximize: a diverged trial without a value keeps the best; a running trial is not finished.
  const ReportData up = sweep_of(Goal::maximize, {{kNaN, S::diverged},
                                                  {0.5, S::completed},
                                                  {0.7, S::stopped_early},
                                                  {0.9, S::running},
                                                  {0.6, S::completed},
                                                  {kNaN, S::failed},
                                                  {0.8, S::completed},
                                                  {0.75, S::interrupted}});
  const auto [up_best, up_trials] = best_so_far(up);
  EXPECT_EQ(up_trials, (std::vector<std::size_t>{0, 1, 2, 4, 5, 6}));
  EXPECT_EQ(up_best, (std::vector<std::optional<double>>{std::nullopt, 0.5, 0.7, 0.7, 0.7, 0.8}));

  const ReportData down = sweep_of(Goal::minimize, {{0.5, S::completed},
                                                    {0.7, S::completed},
                                                    {0.3, S::failed},
                                                    {kNaN, S::diverged},
                                                    {0.4, S::completed},
                                                    {0.1, S::cancelled}});
  const auto [down_best, down_trials] = best_so_far(down);
  EXPECT_EQ(down_trials, (std::vector<std::size_t>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(down_best, (std::vector<std::optional<double>>{0.5, 0.5, 0.3, 0.3, 0.3, 0.1}));

  // In the payload: [trial index, best so far], the trial's own value is trials[i].best.
  const Json payload = build_payload(down, analyze(down));
  EXPECT_EQ(payload["history"].size(), 6u);
  EXPECT_EQ(payload["history"][2], Json::array({2, 0.3}));
  EXPECT_EQ(payload["history"][3], Json::array({3, 0.3}));
  EXPECT_EQ(payload["trials"][3]["best"], nullptr);
}

TEST(TrialHistory, EndsAtTheBestTrialOfAFinishedSweep) {
  const ReportData data = testing::make_synthetic_sweep();
  const ReportModel model = analyze(data);
  ASSERT_TRUE(model.best);
  ASSERT_EQ(model.history.size(), data.trials.size());
  EXPECT_EQ(model.history.back().best_so_far, model.scores[*model.best].best);
}

}  // namespace
}  // namespace sweep::reports
