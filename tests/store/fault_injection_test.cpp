// The store under a failing disk: for every kind of I/O fault (a write, an fsync, a read, a
// truncate, the opening of a journal or WAL file) and every call in turn, a representative
// workload meets the fault. Each time: a sweep::Error (never a crash, a hang or a silent
// success), then, reopened on a healthy disk, the file passes PRAGMA integrity_check, holds
// exactly the state before or after the failed call (transactions are all-or-nothing), and the
// rest of the workload completes from there.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <map>

#include "fault_vfs.h"
#include "raw_sqlite.h"
#include "store/store.h"
#include "store_test_util.h"

namespace sweep {
namespace {

namespace fs = std::filesystem;

// What the workload's steps have done, without times: one line a table.
std::string fingerprint(const fs::path& db) {
  test::RawDb raw(db);
  std::string text;
  for (const char* sql :
       {"SELECT group_concat(name || ':' || state, ',') FROM (SELECT * FROM sweeps ORDER BY id)",
        "SELECT group_concat(number || ':' || state || ':' || attempts, ',') FROM "
        "(SELECT * FROM trials ORDER BY id)",
        "SELECT count(*) || ':' || coalesce(sum(step), 0) FROM metrics",
        "SELECT count(*) FROM events",
        "SELECT group_concat(state || ':' || attempts, ',') FROM (SELECT * FROM jobs ORDER BY id)"})
    text += raw.query_text(sql) + "\n";
  return text;
}

using Step = std::function<void(Store&)>;

// The workload: each step is one public call (one transaction) that finds what it needs by
// name, so it can run on a store reopened after a fault.
std::vector<Step> workload() {
  auto sweep_id = [](Store& s) { return s.find_sweep("faults")->id; };
  auto trial_id = [sweep_id](Store& s, int number) {
    return s.trial_by_number(sweep_id(s), number)->id;
  };
  return {
      [](Store& s) { s.create_sweep(test::sweep_spec("faults")); },
      [=](Store& s) { s.add_trials(sweep_id(s), test::trial_specs(3)); },
      [=](Store& s) { s.set_sweep_state(sweep_id(s), SweepState::running); },
      [=](Store& s) { ASSERT_TRUE(s.claim_trial(trial_id(s, 0), "cpu:0")); },
      [=](Store& s) {
        std::vector<MetricPoint> batch;
        for (int step = 1; step <= 40; ++step)
          batch.push_back(test::point(trial_id(s, 0), "loss", step, 1.0 / step));
        s.log_metrics(batch);
      },
      [=](Store& s) { s.add_event(sweep_id(s), trial_id(s, 0), "started", "trial 0 started"); },
      [=](Store& s) { s.set_trial_state(trial_id(s, 0), TrialState::completed); },
      [=](Store& s) { ASSERT_TRUE(s.claim_trial(trial_id(s, 1), "cpu:0")); },
      [=](Store& s) { s.set_trial_state(trial_id(s, 1), TrialState::interrupted); },
      [=](Store& s) { s.requeue_unfinished(sweep_id(s)); },
      [](Store& s) {
        JobSpec job;
        job.config_yaml = "name: faults\n";
        s.enqueue_job(job);
      },
      [](Store& s) { ASSERT_TRUE(s.claim_next_job("w1", std::chrono::seconds(30))); },
      [](Store& s) { s.heartbeat_job(1, "w1", std::chrono::seconds(30)); },
      [](Store& s) { s.finish_job(1, "w1", JobState::done, 0); },
      [=](Store& s) { s.set_sweep_state(sweep_id(s), SweepState::completed); },
  };
}

class StoreFaults : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("sweep_faults_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path fresh_db() {
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    return dir_ / "sweep.db";
  }

  fs::path dir_;
};

TEST_F(StoreFaults, EveryIoFaultAtEveryPointLeavesAWholeStoreThatResumes) {
  const std::vector<Step> steps = workload();
  // The healthy run: the state after each step (index 0: before any step, the schema only).
  std::vector<std::string> states;
  {
    const fs::path db = fresh_db();
    { Store store(db); }
    states.push_back(fingerprint(db));
    Store store(db);
    for (const Step& step : steps) {
      step(store);
      states.push_back(fingerprint(db));
    }
  }

  test::FaultVfs faults;
  StoreOptions faulty;
  faulty.vfs = test::FaultVfs::kName;
  faulty.retry_limit = std::chrono::milliseconds(2000);
  int runs = 0, failures = 0;
  std::map<std::string, int> met;  // faults that failed a call, by kind
  const auto start = std::chrono::steady_clock::now();
  for (const test::Fault kind : test::kAllFaults) {
    for (int nth = 1;; ++nth) {
      const fs::path db = fresh_db();
      { Store store(db); }  // the schema exists: faults hit the workload, then opening again
      faults.arm(kind, nth);
      std::size_t failed_at = 0;  // the step that met the fault (0 also when opening did)
      bool threw = false;
      try {
        Store store(db, faulty);
        for (failed_at = 0; failed_at < steps.size(); ++failed_at) steps[failed_at](store);
      } catch (const Error& e) {
        threw = true;
        EXPECT_EQ(std::string(e.what()).find(".cpp:"), std::string::npos) << e.what();
      }
      const bool fired = faults.fired();
      faults.arm(kind, 0);
      ++runs;
      if (!threw) {
        // Some faults are absorbed by SQLite itself (a failed read retried, a journal it did not
        // need): then the workload must simply have completed.
        EXPECT_EQ(failed_at, steps.size());
        EXPECT_EQ(fingerprint(db), states.back()) << to_string(kind) << " #" << nth;
        if (!fired) break;  // past the last call of this kind: next kind
        continue;
      }
      ++failures;
      ++met[to_string(kind)];
      SCOPED_TRACE(std::string(to_string(kind)) + " fault at call " + std::to_string(nth) +
                   ", in step " + std::to_string(failed_at));
      {
        test::RawDb raw(db);
        EXPECT_EQ(raw.query_text("PRAGMA integrity_check"), "ok");
      }
      // Opened healthy again: the failed step happened whole or not at all.
      Store store(db);
      const std::string now = fingerprint(db);
      const std::size_t done = failed_at;
      const bool before = now == states[done];
      const bool after = done < steps.size() && now == states[done + 1];
      ASSERT_TRUE(before || after) << "half a transaction:\n"
                                   << now << "expected\n"
                                   << states[done];
      for (std::size_t i = after ? done + 1 : done; i < steps.size(); ++i) steps[i](store);
      EXPECT_EQ(fingerprint(db), states.back());
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("fault injection: %d runs, %d met their fault (", runs, failures);
  for (const auto& [kind, count] : met) std::printf(" %s %d", kind.c_str(), count);
  std::printf(" ), %.1f s\n", seconds);
  for (const char* kind : {"write", "read", "journal open"}) EXPECT_GT(met[kind], 0) << kind;
}

}  // namespace
}  // namespace sweep
