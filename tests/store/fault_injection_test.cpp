// The store under a failing disk: for every kind of I/O fault (a write, an fsync, a read, a
// truncate, the opening of a journal or WAL file) and every call in turn, a representative
// workload meets the fault. Each time: a sweep::Error (never a crash, a hang or a silent
// success), then, reopened on a healthy disk, the file passes PRAGMA integrity_check, holds
// exactly the state before or after the failed call (transactions are all-or-nothing), and the
// rest of the workload completes from there.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <functional>
#include <map>

#include "fault_vfs.h"
#include "raw_sqlite.h"
#include "store/sqlite_connection.h"
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

// Issue 42's hostile pass, #105: under `ulimit -f`, an export's sort too large for memory failed
// writing SQLite's temporary file, and the message named the sweep's database, which a read-only
// connection never writes. The failure names SQLite's temporary file and its directory.
TEST(StoreTemporaryFiles, AFailedTemporaryWriteOfAReaderIsNotBlamedOnTheDatabase) {
  test::TempDir dir;
  const fs::path db = dir.path() / "sweep.db";
  { Store store(db); }
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::close(pipe_fds[0]);
    std::string said = "no error";
    try {
      ::signal(SIGXFSZ, SIG_IGN);
      const rlimit limit{50 * 1024, 50 * 1024};
      ::setrlimit(RLIMIT_FSIZE, &limit);
      ::setenv("SQLITE_TMPDIR", dir.path().c_str(), 1);
      store_detail::Connection conn(db, {.read_only = true});
      try {
        // 20 MB to sort: past what SQLite sorts in memory, so it writes a temporary file.
        conn.exec(
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 200000) "
            "SELECT randomblob(100) AS b FROM n ORDER BY b");
      } catch (const CallError& e) {
        store_detail::throw_in_words(conn.raw(), db, e);
      }
    } catch (const std::exception& e) {
      said = e.what();
    }
    [[maybe_unused]] const ssize_t n = ::write(pipe_fds[1], said.data(), said.size());
    ::_exit(0);
  }
  ::close(pipe_fds[1]);
  std::string said;
  char buffer[4096];
  for (ssize_t n; (n = ::read(pipe_fds[0], buffer, sizeof buffer)) > 0;)
    said.append(buffer, static_cast<std::size_t>(n));
  ::close(pipe_fds[0]);
  int status = 0;
  ::waitpid(child, &status, 0);
  EXPECT_NE(said.find("cannot write SQLite's temporary file in " + dir.path().string()),
            std::string::npos)
      << said;
  EXPECT_NE(said.find("this process has a file-size limit (ulimit -f)"), std::string::npos) << said;
  EXPECT_EQ(said.find("cannot write " + db.string()), std::string::npos) << said;
}

}  // namespace
}  // namespace sweep
