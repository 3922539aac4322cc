// Events, and the export table / JSON that `sweep export` and the report read.
#include <gmock/gmock.h>

#include <cmath>
#include <limits>

#include "common/json.h"
#include "store_test_util.h"

namespace sweep::test {
namespace {

using ::testing::ElementsAre;

TEST(StoreEvents, AddAndFollowById) {
  TempDir dir;
  Store store(dir / "sweep.db");
  const auto s = store.create_sweep(sweep_spec("e"));
  const auto other = store.create_sweep(sweep_spec("other"));
  const auto ids = store.add_trials(s, trial_specs(1));
  const auto e1 = store.add_event(s, std::nullopt, "started", "2 GPUs");
  const auto e2 = store.add_event(s, ids[0], "stopped_early", "asha at epoch 3");
  store.add_event(other, std::nullopt, "started", "");
  EXPECT_THROW(store.add_event(s, std::nullopt, "", "no kind"), Error);
  const auto all = store.events(s);
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].id, e1);
  EXPECT_EQ(all[0].kind, "started");
  EXPECT_EQ(all[0].message, "2 GPUs");
  EXPECT_FALSE(all[0].trial_id.has_value());
  EXPECT_GT(all[0].time, 1.6e9);
  EXPECT_EQ(all[1].trial_id, ids[0]);
  const auto after = store.events(s, e1);
  ASSERT_EQ(after.size(), 1u);
  EXPECT_EQ(after[0].id, e2);
}

struct ExportFixture : ::testing::Test {
  TempDir dir;
  Store store{dir / "sweep.db"};
  std::int64_t s = store.create_sweep(sweep_spec("x"));
  std::vector<std::int64_t> ids = [&] {
    auto specs = trial_specs(3);
    specs[2].params = {{"training.learning_rate", 0.5}, {"extra", true}};
    return store.add_trials(s, specs);
  }();

  void SetUp() override {
    store.claim_trial(ids[0], "cpu:0");
    store.claim_trial(ids[1], "cpu:1");
    store.log_metrics(std::vector<MetricPoint>{
        point(ids[0], "val_accuracy", 1, 0.5), point(ids[0], "val_accuracy", 2, 0.9),
        point(ids[0], "val_accuracy", 3, 0.8), point(ids[0], "train_loss", 3, 0.25),
        point(ids[1], "train_loss", 1, std::numeric_limits<double>::quiet_NaN())});
    store.set_trial_state(ids[0], TrialState::completed,
                          {.summary = sweep::Json{{"images_per_s", 1234.5}}});
    store.set_trial_state(ids[1], TrialState::diverged, {.error = "loss became NaN, step 1"});
  }
};

TEST_F(ExportFixture, TableHasOneRowPerTrialAndAColumnPerParamAndSeries) {
  const auto t = store.export_table(s);
  EXPECT_THAT(t.header,
              ElementsAre("number", "state", "device", "extra", "training.batch_size",
                          "training.learning_rate", "training.optimizer", "best_val_accuracy",
                          "final_train_loss", "final_val_accuracy", "attempts", "started_at",
                          "finished_at", "duration_s", "stop_reason", "error"));
  ASSERT_EQ(t.rows.size(), 3u);
  for (const auto& row : t.rows) EXPECT_EQ(row.size(), t.header.size());
  const auto& r0 = t.rows[0];
  EXPECT_EQ(r0[0], "0");
  EXPECT_EQ(r0[1], "completed");
  EXPECT_EQ(r0[2], "cpu:0");
  EXPECT_EQ(r0[3], "");  // trial 0 has no "extra"
  EXPECT_EQ(r0[4], "64");
  EXPECT_EQ(r0[5], "0.001");  // shortest round-trip text
  EXPECT_EQ(r0[6], "sgdm");   // strings without JSON quotes
  EXPECT_EQ(r0[7], "0.9");    // best, not final
  EXPECT_EQ(r0[8], "0.25");
  EXPECT_EQ(r0[9], "0.8");  // final = highest step
  EXPECT_EQ(r0[10], "1");
  EXPECT_FALSE(r0[13].empty());
  const auto& r1 = t.rows[1];
  EXPECT_EQ(r1[1], "diverged");
  EXPECT_EQ(r1[7], "");
  EXPECT_EQ(r1[8], "nan");
  EXPECT_EQ(r1[15], "loss became NaN, step 1");
  const auto& r2 = t.rows[2];
  EXPECT_EQ(r2[1], "queued");
  EXPECT_EQ(r2[3], "true");
  EXPECT_EQ(r2[5], "0.5");
  EXPECT_EQ(r2[11], "");  // never started
  EXPECT_THROW(store.export_table(4242), Error);
}

// Which cells are numbers, so that a CSV writer guarding text against spreadsheet formulas
// leaves a negative number (or -inf) as it is and guards a text value that starts with '-'.
TEST(StoreExport, TheTableSaysWhichCellsAreNumbers) {
  TempDir dir;
  Store store(dir / "sweep.db");
  const auto s = store.create_sweep(sweep_spec("n"));
  auto specs = trial_specs(2);
  specs[0].params = {{"offset", -2.5}, {"tag", "-2.5"}, {"on", true}};
  specs[1].params = {{"offset", 1}};
  const auto ids = store.add_trials(s, specs);
  store.claim_trial(ids[0], "cpu:0");
  store.log_metrics(
      std::vector<MetricPoint>{point(ids[0], "val_accuracy", 1, -0.5),
                               point(ids[0], "loss", 1, -std::numeric_limits<double>::infinity())});
  store.set_trial_state(ids[0], TrialState::failed, {.error = "=HYPERLINK(\"x\")"});
  const ExportTable t = store.export_table(s);
  EXPECT_THAT(t.header,
              ElementsAre("number", "state", "device", "offset", "on", "tag", "best_val_accuracy",
                          "final_loss", "final_val_accuracy", "attempts", "started_at",
                          "finished_at", "duration_s", "stop_reason", "error"));
  ASSERT_EQ(t.number.size(), t.rows.size());
  const auto& r0 = t.rows[0];
  const auto& n0 = t.number[0];
  ASSERT_EQ(n0.size(), r0.size());
  EXPECT_EQ(r0[3], "-2.5");
  EXPECT_TRUE(n0[3]);  // the number -2.5
  EXPECT_EQ(r0[5], "-2.5");
  EXPECT_FALSE(n0[5]);  // the text "-2.5"
  EXPECT_FALSE(n0[4]);  // true
  EXPECT_EQ(r0[6], "-0.5");
  EXPECT_TRUE(n0[6]);
  EXPECT_EQ(r0[7], "-inf");
  EXPECT_TRUE(n0[7]);
  EXPECT_TRUE(n0[0] && n0[9] && n0[10] && n0[11] && n0[12]);
  EXPECT_FALSE(n0[1] || n0[2] || n0[13] || n0[14]);
  EXPECT_EQ(r0[14], "=HYPERLINK(\"x\")");
  // An empty cell is no number: nothing to write.
  EXPECT_EQ(t.rows[1][6], "");
  EXPECT_FALSE(t.number[1][6]);
}

// JSON has no NaN or infinity: a parameter that is one would be stored as null, and two trials of
// nan and inf would read alike. It is refused with its name; the config keeps such values as text.
TEST(StoreTrials, ANonFiniteParameterIsRefusedNotStoredAsNull) {
  TempDir dir;
  Store store(dir / "sweep.db");
  const auto s = store.create_sweep(sweep_spec("nan"));
  auto specs = trial_specs(1);
  specs[0].params = {{"lr", 0.1}, {"opt", {{"betas", {0.9, std::nan("")}}}}};
  try {
    store.add_trials(s, specs);
    FAIL() << "a NaN parameter was stored";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("trial 0: parameter 'opt.betas.1' is a NaN or infinite "
                                         "number, which JSON cannot hold"),
              std::string::npos)
        << e.what();
  }
  specs[0].params = {{"x", "nan"}, {"y", "inf"}};
  const auto ids = store.add_trials(s, specs);
  EXPECT_EQ(store.trials(s).at(0).params, (sweep::Json{{"x", "nan"}, {"y", "inf"}}));
  EXPECT_EQ(store.trials(s).at(0).id, ids[0]);
}

TEST_F(ExportFixture, JsonCarriesSweepAndTrials) {
  const auto j = store.export_json(s);
  EXPECT_EQ(j["sweep"]["name"], "x");
  EXPECT_EQ(j["sweep"]["metric"]["goal"], "maximize");
  ASSERT_EQ(j["trials"].size(), 3u);
  const auto& t0 = j["trials"][0];
  EXPECT_EQ(t0["state"], "completed");
  EXPECT_EQ(t0["params"]["training.optimizer"], "sgdm");
  EXPECT_EQ(t0["best"]["val_accuracy"], 0.9);
  EXPECT_EQ(t0["final"]["val_accuracy"], 0.8);
  EXPECT_EQ(t0["summary"]["images_per_s"], 1234.5);
  EXPECT_TRUE(j["trials"][1]["final"]["train_loss"].is_null());  // NaN
  EXPECT_TRUE(j["trials"][2]["started_at"].is_null());
  EXPECT_TRUE(j["trials"][2]["best"].empty());
}

}  // namespace
}  // namespace sweep::test
