/*
 * bench_scheduler.cpp — what the executor itself costs per trial.
 *
 * 10,000 trivial trials (each reports two metrics, a progress and a log line, then returns) go
 * through submit → slot → TrialFn → sinks → future, with an event sink that does the work a light
 * real sink does per event (format a row, hash it, count it under a mutex). Then fetch_next walks
 * all futures once. The sinks are chosen by name in make_sinks(): adding the SQLite store is one
 * more branch there (e.g. "store": open a database, return the store's EventSink).
 * Prints a table and `RESULT key=value ...` lines; --max-seconds makes it exit 1 when too slow.
 *
 *   bench_scheduler                       # 10,000 trials, 2 cpu slots, sink "counting"
 *   bench_scheduler --trials 50000 --slots 4 --sink none
 */
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <string>

#include "common/check.h"
#include "common/json.h"
#include "scheduler/scheduler.h"
#include "store/store.h"
#include "sweep/run/store_sink.h"

namespace {

using namespace sweep::scheduler;
using Clock = std::chrono::steady_clock;

// Stands in for a light real sink: one formatted row per event, hashed and counted under a lock.
class CountingSink : public EventSink {
 public:
  void on_queued(const TrialSpec& spec, const std::string& reason) override {
    record("queued", spec.id, reason);
  }
  void on_started(const TrialSpec& spec, const std::vector<Device>& devices) override {
    record("started", spec.id, devices_label(devices));
  }
  void on_metric(const TrialSpec& spec, const MetricPoint& point) override {
    record("metric", spec.id, point.name + "=" + std::to_string(point.value));
  }
  void on_log(const TrialSpec& spec, std::string_view line) override {
    record("log", spec.id, std::string(line));
  }
  void on_progress(const TrialSpec& spec, double fraction, const std::string& text) override {
    record("progress", spec.id, text);
  }
  void on_finished(const TrialSpec& spec, const TrialOutcome& outcome,
                   const std::optional<Device>&) override {
    record("finished", spec.id, std::string(sweep::to_string(outcome.state)));
  }
  std::size_t events() const {
    std::lock_guard lock(mutex_);
    return events_;
  }

 private:
  void record(const char* kind, std::int64_t id, const std::string& detail) {
    const std::string row = std::string(kind) + "|" + std::to_string(id) + "|" + detail;
    const std::size_t hash = std::hash<std::string>{}(row);
    std::lock_guard lock(mutex_);
    ++events_;
    checksum_ ^= hash;
  }
  mutable std::mutex mutex_;
  std::size_t events_ = 0;
  std::size_t checksum_ = 0;
};

struct Sinks {
  std::vector<std::shared_ptr<EventSink>> sinks;
  std::function<std::size_t()> events_seen = [] { return std::size_t{0}; };
  // "store": the real thing `sweep run` uses — a SQLite database in a temporary folder, the
  // trials created in it first (their ids are the specs' ids), and run_sweep's StoreSink.
  std::shared_ptr<sweep::Store> store;
  std::vector<std::int64_t> trial_ids;
  double setup_seconds = 0;
  std::filesystem::path dir;
  ~Sinks() {
    sinks.clear();
    store.reset();
    if (!dir.empty()) std::filesystem::remove_all(dir);
  }
};

// The one place to add sinks to the benchmark ("store" goes here).
void make_sinks(const std::string& name, int trials, Sinks& made) {
  if (name == "none") return;
  if (name == "store") {
    const auto start = Clock::now();
    made.dir =
        std::filesystem::temp_directory_path() / ("bench_scheduler_" + std::to_string(::getpid()));
    std::filesystem::remove_all(made.dir);
    made.store = std::make_shared<sweep::Store>(made.dir / "sweep.db");
    const std::int64_t sweep_id =
        made.store->create_sweep({.name = "bench", .metric_name = "val_accuracy"});
    std::vector<sweep::TrialSpec> specs(static_cast<std::size_t>(trials));
    for (int i = 0; i < trials; ++i) {
      specs[static_cast<std::size_t>(i)].number = i;
      specs[static_cast<std::size_t>(i)].params = {{"i", i}};
    }
    made.trial_ids = made.store->add_trials(sweep_id, specs);
    std::map<std::int64_t, sweep::run::TrialPaths> paths;
    for (std::int64_t id : made.trial_ids) {
      paths[id].trial_dir = (made.dir / "trials").string();  // one folder: no per-trial mkdir cost
      paths[id].write_log = false;
    }
    made.sinks.push_back(
        std::make_shared<sweep::run::StoreSink>(*made.store, sweep_id, made.dir, std::move(paths)));
    made.setup_seconds = std::chrono::duration<double>(Clock::now() - start).count();
    return;
  }
  if (name == "counting") {
    auto counting = std::make_shared<CountingSink>();
    made.sinks.push_back(counting);
    made.events_seen = [counting] { return counting->events(); };
    return;
  }
  throw sweep::Error("bench_scheduler: unknown --sink '" + name +
                     "' (known: none, counting, store)");
}

TrialOutcome trivial_trial(TrialContext& ctx) {
  ctx.report("loss", 0.5, 1, 1);
  ctx.report("val_accuracy", 0.9, 1, 1);
  ctx.set_progress(1.0, "epoch 1/1");
  ctx.log("done");
  return {sweep::TrialState::completed, "", sweep::Json::object()};
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Executor overhead: N trivial trials through the slots, with event sinks"};
  int trials = 10000;
  int slots = 2;
  std::string sink_name = "counting";
  double max_seconds = 0;
  app.add_option("--trials", trials, "number of trials");
  app.add_option("--slots", slots, "CPU slots");
  app.add_option("--sink", sink_name, "event sink: none | counting | store (SQLite, as sweep run)");
  app.add_option("--max-seconds", max_seconds, "exit 1 when submit-to-all-done takes longer");
  CLI11_PARSE(app, argc, argv);

  try {
    Sinks sinks;
    make_sinks(sink_name, trials, sinks);
    ExecutorOptions options;
    options.devices = {Device::cpu()};
    options.cpu_slots = slots;
    std::vector<TrialFuture> futures;
    futures.reserve(static_cast<std::size_t>(trials));
    double run_seconds = 0, fetch_seconds = 0;
    std::size_t completed = 0;
    {
      Executor executor(options, sinks.sinks);
      const auto start = Clock::now();
      for (int i = 0; i < trials; ++i) {
        TrialSpec spec;
        spec.number = i;
        spec.params = {{"i", i}};
        if (!sinks.trial_ids.empty()) spec.id = sinks.trial_ids[static_cast<std::size_t>(i)];
        futures.push_back(executor.submit(std::move(spec), trivial_trial));
      }
      for (const auto& future : futures)
        completed += future.outcome().state == sweep::TrialState::completed ? 1 : 0;
      if (sinks.store) {  // everything durable: the metrics written, as `sweep run` ends
        for (auto& sink : sinks.sinks)
          if (auto* store_sink = dynamic_cast<sweep::run::StoreSink*>(sink.get()))
            store_sink->flush();
      }
      run_seconds = std::chrono::duration<double>(Clock::now() - start).count();

      const auto fetch_start = Clock::now();
      std::size_t fetched = 0;
      while (fetch_next(futures)) ++fetched;
      fetch_seconds = std::chrono::duration<double>(Clock::now() - fetch_start).count();
      if (fetched != futures.size()) throw sweep::Error("fetch_next missed futures");
    }
    if (completed != static_cast<std::size_t>(trials))
      throw sweep::Error("only " + std::to_string(completed) + " of " + std::to_string(trials) +
                         " trials completed");

    std::printf("%-28s %12s\n", "what", "value");
    std::printf("%-28s %12d\n", "trials", trials);
    std::printf("%-28s %12d\n", "cpu slots", slots);
    std::printf("%-28s %12s\n", "sink", sink_name.c_str());
    std::printf("%-28s %12zu\n", "sink events", sinks.events_seen());
    if (sinks.store) std::printf("%-28s %12.3f\n", "store: create trials (s)", sinks.setup_seconds);
    std::printf("%-28s %12.3f\n", "submit to all done (s)", run_seconds);
    std::printf("%-28s %12.1f\n", "trials per second", trials / run_seconds);
    std::printf("%-28s %12.2f\n", "microseconds per trial", 1e6 * run_seconds / trials);
    std::printf("%-28s %12.3f\n", "fetch_next over all (s)", fetch_seconds);
    std::printf(
        "RESULT bench=scheduler trials=%d slots=%d sink=%s seconds=%.3f "
        "trials_per_second=%.1f fetch_next_seconds=%.3f\n",
        trials, slots, sink_name.c_str(), run_seconds, trials / run_seconds, fetch_seconds);
    run_seconds += sinks.setup_seconds;  // the limit is for everything, trial creation included
    if (max_seconds > 0 && run_seconds > max_seconds) {
      std::fprintf(stderr, "bench_scheduler: %.3f s is over the %.3f s limit\n", run_seconds,
                   max_seconds);
      return 1;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_scheduler: %s\n", e.what());
    return 1;
  }
  return 0;
}
