// Many threads and many processes on one database: atomic claims, writers with a polling reader,
// a reader during a writer, several processes creating the same fresh file. Never an error.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <atomic>
#include <cstring>
#include <fstream>
#include <map>
#include <thread>

#include "raw_sqlite.h"
#include "store_test_util.h"

extern char** environ;

namespace sweep::test {
namespace {

constexpr int kWorkers = 8;
constexpr int kItems = 200;

// One run of tests/store/store_test_helper.cpp with stdout and stderr in files.
class HelperProcess {
 public:
  HelperProcess(const std::vector<std::string>& args, std::filesystem::path out)
      : out_(std::move(out)), err_(out_.string() + ".err") {
    std::vector<std::string> argv_text = {SWEEP_STORE_HELPER};
    argv_text.insert(argv_text.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : argv_text) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, out_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&actions, 2, err_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int rc = posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) throw std::runtime_error(std::string("posix_spawn: ") + std::strerror(rc));
  }
  HelperProcess(const HelperProcess&) = delete;
  HelperProcess& operator=(const HelperProcess&) = delete;
  ~HelperProcess() {
    if (pid_ > 0) wait();
  }

  void kill_now() { ::kill(pid_, SIGKILL); }
  // Exit status (-1: killed by a signal).
  int wait() {
    int status = 0;
    while (::waitpid(pid_, &status, 0) == -1 && errno == EINTR) {
    }
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  std::vector<std::int64_t> output_numbers() const {
    std::ifstream f(out_);
    std::vector<std::int64_t> out;
    for (std::int64_t v; f >> v;) out.push_back(v);
    return out;
  }
  std::string errors() const {
    std::ifstream f(err_);
    return std::string(std::istreambuf_iterator<char>(f), {});
  }

 private:
  std::filesystem::path out_, err_;
  pid_t pid_ = -1;
};

void touch(const std::filesystem::path& p) { std::ofstream(p) << "go\n"; }

// Runs kWorkers helpers with `args`, starts them together, expects success from all of them.
std::vector<std::vector<std::int64_t>> run_helpers(const TempDir& dir,
                                                   const std::vector<std::string>& args) {
  const auto go = dir / ("go-" + args[0]);
  std::vector<std::unique_ptr<HelperProcess>> procs;
  std::vector<std::string> full = args;
  full.insert(full.begin() + 2, go.string());
  for (int i = 0; i < kWorkers; ++i)
    procs.push_back(
        std::make_unique<HelperProcess>(full, dir / (args[0] + "-" + std::to_string(i) + ".out")));
  touch(go);
  std::vector<std::vector<std::int64_t>> outputs;
  for (auto& p : procs) {
    const int status = p->wait();
    EXPECT_EQ(status, 0) << p->errors();
    outputs.push_back(p->output_numbers());
  }
  return outputs;
}

void expect_each_exactly_once(const std::vector<std::vector<std::int64_t>>& per_worker,
                              std::vector<std::int64_t> expected) {
  std::map<std::int64_t, int> seen;
  for (const auto& items : per_worker)
    for (auto v : items) ++seen[v];
  for (auto v : expected) {
    EXPECT_EQ(seen[v], 1) << "item " << v << " claimed " << seen[v] << " times";
    seen.erase(v);
  }
  EXPECT_TRUE(seen.empty()) << "claimed items that do not exist";
}

std::vector<std::int64_t> iota_numbers(int n) {
  std::vector<std::int64_t> v(static_cast<std::size_t>(n));
  std::iota(v.begin(), v.end(), 0);
  return v;
}

TEST(StoreConcurrency, ThreadsSharingOneStoreClaimEachTrialOnce) {
  TempDir dir;
  Store store(dir / "sweep.db");
  const auto s = store.create_sweep(sweep_spec("threads"));
  store.add_trials(s, trial_specs(kItems));
  std::vector<std::vector<std::int64_t>> claimed(kWorkers);
  std::vector<std::thread> threads;
  for (int w = 0; w < kWorkers; ++w)
    threads.emplace_back([&, w] {
      while (auto t = store.claim_next_trial(s, "cpu:" + std::to_string(w))) {
        claimed[static_cast<std::size_t>(w)].push_back(t->number);
        store.set_trial_state(t->id, TrialState::completed);
      }
    });
  for (auto& t : threads) t.join();
  expect_each_exactly_once(claimed, iota_numbers(kItems));
}

// Eight connections in one process: SQLite's own locking between connections, not our mutex.
TEST(StoreConcurrency, ThreadsWithTheirOwnConnectionsClaimEachTrialOnce) {
  TempDir dir;
  const auto path = dir / "sweep.db";
  std::int64_t s = 0;
  std::vector<std::int64_t> ids;
  {
    Store store(path);
    s = store.create_sweep(sweep_spec("conns"));
    ids = store.add_trials(s, trial_specs(kItems));
  }
  std::vector<std::vector<std::int64_t>> claimed(kWorkers);
  std::vector<std::thread> threads;
  for (int w = 0; w < kWorkers; ++w)
    threads.emplace_back([&, w] {
      Store store(path);
      // Half the workers claim by id (claim_trial), half take the next one: both are atomic.
      if (w % 2 == 0) {
        for (auto id : ids)
          if (store.claim_trial(id, "w")) claimed[static_cast<std::size_t>(w)].push_back(id);
      } else {
        while (auto t = store.claim_next_trial(s, "w"))
          claimed[static_cast<std::size_t>(w)].push_back(t->id);
      }
    });
  for (auto& t : threads) t.join();
  expect_each_exactly_once(claimed, ids);
}

TEST(StoreConcurrency, ProcessesClaimEachTrialOnce) {
  TempDir dir;
  const auto path = dir / "sweep.db";
  std::int64_t s = 0;
  {
    Store store(path);
    s = store.create_sweep(sweep_spec("procs"));
    store.add_trials(s, trial_specs(kItems));
  }
  const auto claimed = run_helpers(dir, {"claim-trials", path.string(), std::to_string(s)});
  expect_each_exactly_once(claimed, iota_numbers(kItems));
  Store store(path, {.read_only = true});
  const auto list = store.list_sweeps();
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0].trials_by_state.at(TrialState::completed), kItems);
}

TEST(StoreConcurrency, ProcessesClaimEachJobOnce) {
  TempDir dir;
  const auto path = dir / "sweep.db";
  std::vector<std::int64_t> ids;
  {
    Store store(path);
    for (int i = 0; i < kItems; ++i)
      ids.push_back(
          store.enqueue_job({.config_yaml = "name: j" + std::to_string(i), .priority = i % 4}));
  }
  const auto claimed = run_helpers(dir, {"claim-jobs", path.string()});
  expect_each_exactly_once(claimed, ids);
  Store store(path, {.read_only = true});
  for (const auto& j : store.jobs()) {
    EXPECT_EQ(j.state, JobState::done);
    EXPECT_EQ(j.attempts, 1);
  }
}

TEST(StoreConcurrency, ProcessesWriteMetricsWhileAnotherProcessPollsReads) {
  constexpr int kPoints = 3000;
  TempDir dir;
  const auto path = dir / "sweep.db";
  std::vector<std::int64_t> trial_ids;
  std::int64_t s = 0;
  {
    Store store(path);
    s = store.create_sweep(sweep_spec("metrics"));
    trial_ids = store.add_trials(s, trial_specs(kWorkers));
  }
  const auto go = dir / "go";
  const auto stop = dir / "stop";
  HelperProcess reader({"poll-reads", path.string(), go.string(), stop.string()},
                       dir / "reader.out");
  std::vector<std::unique_ptr<HelperProcess>> writers;
  for (int w = 0; w < kWorkers; ++w)
    writers.push_back(std::make_unique<HelperProcess>(
        std::vector<std::string>{"write-metrics", path.string(), go.string(),
                                 std::to_string(trial_ids[static_cast<std::size_t>(w)]),
                                 std::to_string(kPoints)},
        dir / ("writer-" + std::to_string(w) + ".out")));
  touch(go);
  for (auto& w : writers) {
    EXPECT_EQ(w->wait(), 0) << w->errors();
    EXPECT_THAT(w->output_numbers(), ::testing::ElementsAre(kPoints));
  }
  touch(stop);
  EXPECT_EQ(reader.wait(), 0) << reader.errors();
  ASSERT_EQ(reader.output_numbers().size(), 1u);
  EXPECT_GE(reader.output_numbers()[0], 1);
  Store store(path, {.read_only = true});
  EXPECT_EQ(store.metrics(s).size(), static_cast<std::size_t>(kWorkers * kPoints));
}

TEST(StoreConcurrency, ProcessesCreatingTheSameFreshFileAtOnce) {
  TempDir dir;
  const auto path = dir / "new/dir/sweep.db";
  const auto created = run_helpers(dir, {"open-fresh", path.string()});
  std::vector<std::int64_t> all;
  for (const auto& c : created) all.insert(all.end(), c.begin(), c.end());
  EXPECT_EQ(all.size(), static_cast<std::size_t>(kWorkers));
  Store store(path);
  EXPECT_EQ(store.jobs().size(), static_cast<std::size_t>(kWorkers));
  RawDb raw(path);
  EXPECT_EQ(raw.query_text("SELECT count(*) FROM schema_version"), "1");
}

// A writer killed with SIGKILL in the middle of its transactions: the file reopens cleanly, holds
// only whole batches, passes SQLite's integrity check, and takes new writes.
TEST(StoreConcurrency, WriterKilledMidTransactionLeavesOnlyWholeBatches) {
  TempDir dir;
  const auto path = dir / "sweep.db";
  std::int64_t s = 0, trial = 0;
  {
    Store store(path);
    s = store.create_sweep(sweep_spec("killed"));
    trial = store.add_trials(s, trial_specs(1))[0];
  }
  const auto go = dir / "go";
  HelperProcess writer({"write-until-killed", path.string(), go.string(), std::to_string(trial)},
                       dir / "writer.out");
  touch(go);
  {
    Store reader(path, {.read_only = true});
    while (reader.trial_metrics(trial).size() < 2000)
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  writer.kill_now();
  EXPECT_EQ(writer.wait(), -1);
  Store store(path);
  const auto points = store.trial_metrics(trial).size();
  EXPECT_GE(points, 2000u);
  EXPECT_EQ(points % 100, 0u) << "a batch was half written";
  RawDb raw(path);
  EXPECT_EQ(raw.query_text("PRAGMA integrity_check"), "ok");
  EXPECT_NO_THROW(store.log_metric(point(trial, "after", 0, 1.0)));
}

// A read-only reader in the same process, on its own connection, polls while a writer writes
// batches and while another connection holds an open write transaction: it never waits for
// the writer, never errors, and only ever sees committed batches.
TEST(StoreConcurrency, ReaderNeverBlocksOnAWriter) {
  constexpr int kBatches = 60, kBatch = 200;
  TempDir dir;
  const auto path = dir / "sweep.db";
  Store writer(path);
  const auto s = writer.create_sweep(sweep_spec("rw"));
  const auto ids = writer.add_trials(s, trial_specs(1));
  Store reader(path, {.read_only = true});

  std::atomic<bool> done{false};
  std::atomic<int> bad_counts{0};
  std::thread poller([&] {
    std::size_t last = 0;
    while (!done) {
      const auto n = reader.metrics(s).size();
      if (n % kBatch != 0 || n < last) ++bad_counts;  // a half batch, or time going backwards
      last = n;
    }
  });
  for (int b = 0; b < kBatches; ++b) {
    std::vector<MetricPoint> batch;
    for (int i = 0; i < kBatch; ++i) batch.push_back(point(ids[0], "loss", b * kBatch + i, 0.5));
    writer.log_metrics(batch);
  }
  {
    // An uncommitted transaction elsewhere: readers keep reading the last committed snapshot.
    RawDb other(path);
    other.exec("BEGIN IMMEDIATE; DELETE FROM metrics;");
    EXPECT_EQ(reader.metrics(s).size(), static_cast<std::size_t>(kBatches * kBatch));
    other.exec("ROLLBACK");
  }
  done = true;
  poller.join();
  EXPECT_EQ(bad_counts.load(), 0);
  EXPECT_EQ(reader.metrics(s).size(), static_cast<std::size_t>(kBatches * kBatch));
}

}  // namespace
}  // namespace sweep::test
