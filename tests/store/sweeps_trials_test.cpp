// Round trips of sweeps, trials and trial_params; state changes; resume helpers; rollbacks.
#include <gmock/gmock.h>

#include "common/json.h"
#include "store_test_util.h"

namespace sweep::test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(StoreSweeps, RoundTripAndNameUniqueness) {
  TempDir dir;
  Store store(dir / "sweep.db");
  const double before = utc_now();
  const auto id = store.create_sweep(sweep_spec("lenet", MetricGoal::minimize));
  const auto row = store.find_sweep("lenet");
  ASSERT_TRUE(row.has_value());
  EXPECT_EQ(row->id, id);
  EXPECT_EQ(row->config_yaml, sweep_spec("lenet").config_yaml);
  EXPECT_EQ(row->config_path, "configs/lenet.yaml");
  EXPECT_EQ(row->metric_name, "val_accuracy");
  EXPECT_EQ(row->metric_goal, MetricGoal::minimize);
  EXPECT_EQ(row->state, SweepState::created);
  EXPECT_EQ(row->devices, "cpu x2");
  EXPECT_GE(row->created_at, before - 1);
  EXPECT_FALSE(row->started_at.has_value());
  EXPECT_EQ(store.find_sweep(id)->name, "lenet");
  EXPECT_FALSE(store.find_sweep("nope").has_value());
  EXPECT_FALSE(store.find_sweep(std::int64_t{999}).has_value());

  try {
    store.create_sweep(sweep_spec("lenet"));
    FAIL() << "a second sweep with the same name was created";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("already exists"));
  }
  EXPECT_EQ(store.create_sweep(sweep_spec("lenet"), Store::IfExists::reuse), id);
}

TEST(StoreSweeps, StateTimesAndListWithCounts) {
  TempDir dir;
  Store store(dir / "sweep.db");
  const auto a = store.create_sweep(sweep_spec("a"));
  const auto b = store.create_sweep(sweep_spec("b"));
  store.add_trials(a, trial_specs(3));
  store.set_sweep_state(a, SweepState::running);
  const auto started = store.find_sweep(a)->started_at;
  ASSERT_TRUE(started.has_value());
  store.set_sweep_state(a, SweepState::interrupted);
  EXPECT_TRUE(store.find_sweep(a)->finished_at.has_value());
  store.set_sweep_state(a, SweepState::running);  // resumed: same start, not finished any more
  EXPECT_EQ(store.find_sweep(a)->started_at, started);
  EXPECT_FALSE(store.find_sweep(a)->finished_at.has_value());
  EXPECT_THROW(store.set_sweep_state(12345, SweepState::running), Error);

  ASSERT_TRUE(store.claim_trial(store.trial_by_number(a, 1)->id, "cpu:0"));
  const auto list = store.list_sweeps();
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0].sweep.id, b);  // newest first
  EXPECT_EQ(list[0].trial_count, 0);
  EXPECT_TRUE(list[0].trials_by_state.empty());
  EXPECT_EQ(list[1].sweep.id, a);
  EXPECT_EQ(list[1].trial_count, 3);
  EXPECT_EQ(list[1].trials_by_state.at(TrialState::queued), 2);
  EXPECT_EQ(list[1].trials_by_state.at(TrialState::running), 1);
}

TEST(StoreTrials, AddReadAndFilterByParameter) {
  TempDir dir;
  Store store(dir / "sweep.db");
  const auto s = store.create_sweep(sweep_spec("t"));
  auto specs = trial_specs(4);
  specs[2].repeat = 1;
  specs[2].wait_reason = "waiting for a free GPU";
  const auto ids = store.add_trials(s, specs);
  ASSERT_EQ(ids.size(), 4u);
  const auto trials = store.trials(s);
  ASSERT_EQ(trials.size(), 4u);
  for (std::size_t i = 0; i < trials.size(); ++i) {
    EXPECT_EQ(trials[i].id, ids[i]);
    EXPECT_EQ(trials[i].number, static_cast<std::int64_t>(i));
    EXPECT_EQ(trials[i].state, TrialState::queued);
    EXPECT_EQ(trials[i].params, specs[i].params);
    EXPECT_EQ(trials[i].config_yaml, specs[i].config_yaml);
    EXPECT_EQ(trials[i].seed, specs[i].seed);
    EXPECT_EQ(trials[i].attempts, 0);
    EXPECT_FALSE(trials[i].started_at.has_value());
  }
  EXPECT_EQ(trials[2].repeat, 1);
  EXPECT_EQ(trials[2].wait_reason, "waiting for a free GPU");

  const auto adam = store.trials_with_param(s, "training.optimizer", "adam");
  ASSERT_EQ(adam.size(), 2u);
  EXPECT_EQ(adam[0].number, 1);
  EXPECT_EQ(adam[1].number, 3);
  const auto bs128 = store.trials_with_param(s, "training.batch_size", 128);
  ASSERT_EQ(bs128.size(), 1u);
  EXPECT_EQ(bs128[0].number, 1);

  EXPECT_EQ(store.trial(ids[3])->number, 3);
  EXPECT_FALSE(store.trial(999999).has_value());
  EXPECT_FALSE(store.trial_by_number(s, 99).has_value());
}

TEST(StoreTrials, AddingADuplicateNumberRollsBackTheWholeBatch) {
  TempDir dir;
  Store store(dir / "sweep.db");
  const auto s = store.create_sweep(sweep_spec("t"));
  store.add_trials(s, trial_specs(2));
  auto specs = trial_specs(5);  // numbers 0..4: 0 and 1 exist, so the third insert... fails at 0
  std::rotate(specs.begin(), specs.begin() + 2, specs.end());  // 2, 3, 4 go in, then 0 fails
  EXPECT_THROW(store.add_trials(s, specs), Error);
  EXPECT_EQ(store.trials(s).size(), 2u) << "a failed batch left half its trials behind";
  EXPECT_TRUE(store.trials_with_param(s, "training.optimizer", "sgdm").size() == 1u);
  // The store is still usable after the rollback.
  EXPECT_EQ(store.add_trials(s, std::span(specs).first(3)).size(), 3u);
  EXPECT_EQ(store.trials(s).size(), 5u);
}

TEST(StoreTrials, ClaimIsCompareAndSet) {
  TempDir dir;
  Store store(dir / "sweep.db");
  const auto s = store.create_sweep(sweep_spec("t"));
  const auto ids = store.add_trials(s, trial_specs(3));
  store.set_wait_reason(ids[0], "all GPUs busy");
  EXPECT_TRUE(store.claim_trial(ids[0], "cuda:1"));
  EXPECT_FALSE(store.claim_trial(ids[0], "cuda:0")) << "claimed a running trial again";
  const auto t = store.trial(ids[0]);
  EXPECT_EQ(t->state, TrialState::running);
  EXPECT_EQ(t->device, "cuda:1");
  EXPECT_EQ(t->attempts, 1);
  EXPECT_EQ(t->wait_reason, "");
  EXPECT_TRUE(t->started_at.has_value());

  const auto next = store.claim_next_trial(s, "cuda:0");
  ASSERT_TRUE(next.has_value());
  EXPECT_EQ(next->number, 1);  // lowest queued number
  EXPECT_EQ(next->state, TrialState::running);
  EXPECT_EQ(store.claim_next_trial(s, "cuda:0")->number, 2);
  EXPECT_FALSE(store.claim_next_trial(s, "cuda:0").has_value());
}

// A trial's end is recorded even when its summary holds text that is not UTF-8 (an external
// trainer's bytes, or a store written before they were cleaned at the source): nlohmann's dump
// threw on it, the end went unrecorded and the trial stayed `running`.
TEST(StoreTrials, ASummaryWithBytesThatAreNotUtf8IsRecorded) {
  TempDir dir;
  Store store(dir / "sweep.db");
  const auto s = store.create_sweep(sweep_spec("bytes"));
  const auto ids = store.add_trials(s, trial_specs(1));
  ASSERT_TRUE(store.claim_trial(ids[0], "cpu:0"));
  TrialUpdate update;
  update.summary = sweep::Json{{"final", {{"loss\xff\xfe", 0.5}}}};
  update.error = "last stderr: \xff broken";
  EXPECT_NO_THROW(store.set_trial_state(ids[0], TrialState::failed, update));
  const TrialRow row = store.trials(s).front();
  EXPECT_EQ(row.state, TrialState::failed);
  EXPECT_EQ(row.summary["final"]["loss\xEF\xBF\xBD\xEF\xBF\xBD"], 0.5) << row.summary;
  EXPECT_NO_THROW((void)json_text(store.export_json(s)));
}

TEST(StoreTrials, TerminalStatesAreFinal) {
  TempDir dir;
  Store store(dir / "sweep.db");
  const auto s = store.create_sweep(sweep_spec("t"));
  const auto ids = store.add_trials(s, trial_specs(2));
  ASSERT_TRUE(store.claim_trial(ids[0], "cpu:0"));
  TrialUpdate u;
  u.stop_reason = "asha: below the top 1/3 at epoch 3";
  u.summary = sweep::Json{{"best_val_accuracy", 0.71}, {"epochs", 3}};
  u.checkpoint_path = "runs/t/trial-0/ckpt.bin";
  EXPECT_TRUE(store.set_trial_state(ids[0], TrialState::stopped_early, u));
  auto t = store.trial(ids[0]);
  EXPECT_EQ(t->state, TrialState::stopped_early);
  EXPECT_EQ(t->stop_reason, u.stop_reason);
  EXPECT_EQ(t->summary, *u.summary);
  EXPECT_EQ(t->checkpoint_path, *u.checkpoint_path);
  ASSERT_TRUE(t->finished_at.has_value());
  EXPECT_GE(*t->finished_at, *t->started_at);

  // A late "completed" from the runner does not overwrite the final state.
  EXPECT_FALSE(store.set_trial_state(ids[0], TrialState::completed));
  EXPECT_EQ(store.trial(ids[0])->state, TrialState::stopped_early);
  EXPECT_THROW(store.set_trial_state(424242, TrialState::failed), Error);

  // update_trial changes fields, never the state.
  store.update_trial(ids[1], {.error = std::nullopt,
                              .stop_reason = std::nullopt,
                              .summary = std::nullopt,
                              .checkpoint_path = std::nullopt,
                              .log_path = "runs/t/trial-1.log"});
  EXPECT_EQ(store.trial(ids[1])->log_path, "runs/t/trial-1.log");
  EXPECT_EQ(store.trial(ids[1])->state, TrialState::queued);
  EXPECT_THROW(store.update_trial(424242, {}), Error);
  EXPECT_THROW(store.set_wait_reason(424242, "x"), Error);
}

TEST(StoreTrials, ResumeRequeuesUnfinishedAndRetryFailedRequeuesFailed) {
  TempDir dir;
  Store store(dir / "sweep.db");
  const auto s = store.create_sweep(sweep_spec("t"));
  const auto ids = store.add_trials(s, trial_specs(6));
  for (auto id : ids) ASSERT_TRUE(store.claim_trial(id, "cpu:0"));
  store.set_trial_state(ids[0], TrialState::completed);
  store.set_trial_state(ids[1], TrialState::failed, {.error = "out of memory on cuda:0"});
  store.set_trial_state(ids[2], TrialState::diverged);
  store.set_trial_state(ids[3], TrialState::interrupted, {.checkpoint_path = "ckpt-3"});
  // ids[4] stays running (the process was killed), ids[5] goes back to queued.
  store.set_trial_state(ids[5], TrialState::queued);

  std::vector<std::int64_t> numbers;
  for (const auto& t : store.trials(s))
    if (!is_terminal(t.state)) numbers.push_back(t.number);
  EXPECT_THAT(numbers, ElementsAre(3, 4, 5));

  EXPECT_EQ(store.requeue_unfinished(s), 2);
  const auto t3 = store.trial(ids[3]);
  EXPECT_EQ(t3->state, TrialState::queued);
  EXPECT_EQ(t3->checkpoint_path, "ckpt-3");  // kept: the runner continues from it
  EXPECT_THAT(t3->wait_reason, HasSubstr("interrupted"));
  EXPECT_EQ(store.trial(ids[4])->state, TrialState::queued);

  EXPECT_EQ(store.requeue_failed(s), 1);
  const auto t1 = store.trial(ids[1]);
  EXPECT_EQ(t1->state, TrialState::queued);
  EXPECT_EQ(t1->error, "");
  EXPECT_EQ(store.trial(ids[2])->state, TrialState::diverged);
  ASSERT_TRUE(store.claim_trial(ids[1], "cpu:1"));
  EXPECT_EQ(store.trial(ids[1])->attempts, 2);
}

}  // namespace
}  // namespace sweep::test
