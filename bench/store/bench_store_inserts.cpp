/*
 * bench_store_inserts.cpp — how fast the store writes and reads, on a file in a temp directory.
 *
 *   bench_store_inserts [DIR]      (DIR defaults to the system temp directory; use a real disk)
 *
 * The decision: each figure is measured through the public API exactly as sweep uses it (so it
 * includes our locking, statement cache and JSON), not through raw SQLite; the goals are
 * >= 200,000 metric rows/s batched, and report queries over 1,000 trials x 100 epochs in well
 * under a second.
 */
#include <stdlib.h>
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "common/json.h"
#include "store/metric_batcher.h"
#include "store/store.h"

namespace {

using Clock = std::chrono::steady_clock;

// CPU seconds of the whole process: on a shared machine the wall clock measures the neighbours.
double cpu_seconds() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

struct Timer {
  Clock::time_point wall = Clock::now();
  double cpu = cpu_seconds();
};

// One table line (per wall second and per CPU second of the process), plus the
// `RESULT key=value` line (per wall second) that bench/ drivers collect.
void report(const char* key, const char* what, double count, const char* unit, const Timer& t) {
  const double wall = std::chrono::duration<double>(Clock::now() - t.wall).count();
  const double cpu = cpu_seconds() - t.cpu;
  std::printf("%-56s %8.0f %-11s %7.3f s wall %10.0f/s   %7.3f s cpu %10.0f/cpu-s\n", what, count,
              unit, wall, count / wall, cpu, count / cpu);
  std::printf("RESULT store_%s_per_s=%.0f\n", key, count / wall);
}

sweep::SweepSpec spec(const std::string& name) {
  return {.name = name,
          .config_yaml = "name: " + name,
          .config_path = "",
          .metric_name = "val_accuracy",
          .metric_goal = sweep::MetricGoal::maximize,
          .devices = "cpu"};
}

std::vector<sweep::TrialSpec> trial_specs(int n) {
  std::vector<sweep::TrialSpec> out;
  for (int i = 0; i < n; ++i)
    out.push_back({.number = i,
                   .params = {{"training.learning_rate", 1e-4 * (i + 1)},
                              {"training.batch_size", 32 << (i % 4)}},
                   .config_yaml = "training: {}",
                   .seed = i,
                   .repeat = 0,
                   .wait_reason = ""});
  return out;
}

sweep::MetricPoint point(std::int64_t trial, const char* name, std::int64_t step, double v) {
  return {.trial_id = trial,
          .name = name,
          .step = step,
          .epoch = static_cast<double>(step),
          .value = v,
          .wall_time = 1.7e9 + static_cast<double>(step)};
}

}  // namespace

int main(int argc, char** argv) {
  std::string pattern =
      ((argc > 1 ? std::filesystem::path(argv[1]) : std::filesystem::temp_directory_path()) /
       "sweep-bench-XXXXXX")
          .string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    std::perror("mkdtemp");
    return 1;
  }
  const std::filesystem::path dir = pattern;
  try {
    sweep::Store store(dir / "bench.db");

    // 1. Metric rows, batched in log_metrics calls of 10,000 (one transaction each).
    {
      const auto s = store.create_sweep(spec("batched"));
      const auto ids = store.add_trials(s, trial_specs(100));
      constexpr int kRows = 1'000'000, kBatch = 10'000;
      std::vector<sweep::MetricPoint> batch;
      const Timer t0;
      for (int r = 0; r < kRows; r += kBatch) {
        batch.clear();
        for (int i = r; i < r + kBatch; ++i)
          batch.push_back(point(ids[static_cast<std::size_t>(i % 100)],
                                i % 2 ? "train_loss" : "val_accuracy", i / 200,
                                0.001 * (i % 1000)));
        store.log_metrics(batch);
      }
      report("batched_rows", "metric rows, log_metrics batches of 10,000", kRows, "rows", t0);
    }
    // 2. The same through MetricBatcher, 4 producer threads (the scheduler's shape).
    {
      const auto s = store.create_sweep(spec("batcher"));
      const auto ids = store.add_trials(s, trial_specs(100));
      constexpr int kThreads = 4, kPerThread = 250'000;
      const Timer t0;
      {
        sweep::MetricBatcher batcher(store);
        std::vector<std::thread> threads;
        for (int t = 0; t < kThreads; ++t)
          threads.emplace_back([&, t] {
            for (int i = 0; i < kPerThread; ++i)
              batcher.add(point(ids[static_cast<std::size_t>((t * 25) + i % 25)],
                                i % 2 ? "train_loss" : "val_accuracy", i / 50, 0.5));
          });
        for (auto& th : threads) th.join();
        batcher.flush();
      }
      report("batcher_rows", "metric rows, MetricBatcher, 4 threads", kThreads * kPerThread, "rows",
             t0);
    }
    // 3. Unbatched: one transaction per row (what batching avoids).
    {
      const auto s = store.create_sweep(spec("unbatched"));
      const auto ids = store.add_trials(s, trial_specs(1));
      constexpr int kRows = 5'000;
      const Timer t0;
      for (int i = 0; i < kRows; ++i) store.log_metric(point(ids[0], "train_loss", i, 0.5));
      report("unbatched_rows", "metric rows, one transaction each (unbatched)", kRows, "rows", t0);
    }
    // 4. 10,000 trials: created in one call, then claimed and completed one by one.
    {
      const auto s = store.create_sweep(spec("trials"));
      constexpr int kTrials = 10'000;
      const auto specs = trial_specs(kTrials);
      Timer t0;
      store.add_trials(s, specs);
      report("trials_created", "trials created (add_trials, one transaction)", kTrials, "trials",
             t0);
      t0 = Timer{};
      int n = 0;
      while (auto t = store.claim_next_trial(s, "cpu:0")) {
        store.set_trial_state(t->id, sweep::TrialState::completed,
                              {.summary = sweep::Json{{"best", 0.5}}});
        ++n;
      }
      report("trial_transitions", "trial transitions (claim_next_trial + set_trial_state)", 2.0 * n,
             "transitions", t0);
    }
    // 5. The report's reads: 1,000 trials x 100 epochs x 4 series = 400,000 points.
    {
      const auto s = store.create_sweep(spec("report"));
      const auto ids = store.add_trials(s, trial_specs(1000));
      std::vector<sweep::MetricPoint> batch;
      for (auto id : ids) {
        for (int e = 0; e < 100; ++e)
          for (const char* name : {"train_loss", "train_accuracy", "val_loss", "val_accuracy"})
            batch.push_back(point(id, name, e, 0.001 * e + 1e-6 * static_cast<double>(id)));
        if (batch.size() >= 40'000) {
          store.log_metrics(batch);
          batch.clear();
        }
      }
      store.log_metrics(batch);
      Timer t0;
      std::size_t points = 0;
      store.for_each_metric(s, [&](const sweep::MetricPoint&) { ++points; });
      report("report_rows", "report read: for_each_metric, 1,000 trials x 100 epochs",
             static_cast<double>(points), "rows", t0);
      t0 = Timer{};
      const auto latest = store.latest_metrics(s);
      report("latest_series", "status read: latest_metrics", static_cast<double>(latest.size()),
             "series", t0);
      t0 = Timer{};
      const auto table = store.export_table(s);
      report("export_trials", "export_table", static_cast<double>(table.rows.size()), "trials", t0);
      t0 = Timer{};
      const auto best = store.best_trial(s);
      report("best_trial_queries", "best_trial", 1, "queries", t0);
      if (!best) throw sweep::Error("best_trial found nothing");
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_store_inserts: %s\n", e.what());
    std::filesystem::remove_all(dir);
    return 1;
  }
  std::filesystem::remove_all(dir);
  return 0;
}
