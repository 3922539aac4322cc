/*
 * store_test_helper.cpp — the other processes of the multi-process store tests.
 *
 * Each mode opens the store the way a separate `sweep` process would (its own Store, its own
 * connection), waits for a start file so that all helpers begin together, does its part, and
 * prints what it did on stdout, one item a line. Any exception: a message on stderr, exit 1.
 *
 *   helper claim-trials DB GO SWEEP_ID     claim queued trials until none is left; print numbers
 *   helper claim-jobs   DB GO              claim and finish jobs until none is left; print ids
 *   helper write-metrics DB GO TRIAL_ID N  write N points through a MetricBatcher
 *   helper poll-reads   DB GO STOP         read-only: status/report queries until STOP exists
 *   helper open-fresh   DB GO              open (maybe creating) the store, enqueue one job
 *   helper write-until-killed DB GO TRIAL_ID   write batches of 100 points until SIGKILLed
 */
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "store/metric_batcher.h"
#include "store/store.h"

namespace {

void wait_for(const std::filesystem::path& file) {
  while (!std::filesystem::exists(file))
    std::this_thread::sleep_for(std::chrono::microseconds(200));
}

std::string worker_name() { return "helper:" + std::to_string(::getpid()); }

int run(int argc, char** argv) {
  if (argc < 4) {
    std::cerr << "usage: see the comment at the top of store_test_helper.cpp\n";
    return 2;
  }
  const std::string mode = argv[1];
  const std::filesystem::path db = argv[2];
  wait_for(argv[3]);

  if (mode == "claim-trials" && argc == 5) {
    sweep::Store store(db);
    const std::int64_t sweep_id = std::stoll(argv[4]);
    while (auto trial = store.claim_next_trial(sweep_id, worker_name())) {
      std::cout << trial->number << '\n';
      store.set_trial_state(trial->id, sweep::TrialState::completed);
    }
    return 0;
  }
  if (mode == "claim-jobs" && argc == 4) {
    sweep::Store store(db);
    const std::string owner = worker_name();
    while (auto job = store.claim_next_job(owner, std::chrono::seconds(60))) {
      std::cout << job->id << '\n';
      if (!store.heartbeat_job(job->id, owner, std::chrono::seconds(60))) return 3;
      if (!store.finish_job(job->id, owner, sweep::JobState::done, 0)) return 4;
    }
    return 0;
  }
  if (mode == "write-metrics" && argc == 6) {
    sweep::Store store(db);
    const std::int64_t trial_id = std::stoll(argv[4]);
    const int count = std::stoi(argv[5]);
    sweep::MetricBatcher batcher(store,
                                 {.max_rows = 250, .max_delay = std::chrono::milliseconds(2)});
    for (int i = 0; i < count; ++i)
      batcher.add({.trial_id = trial_id,
                   .name = i % 2 ? "train_loss" : "val_accuracy",
                   .step = i / 2,
                   .epoch = std::nullopt,
                   .value = 1.0 / (1 + i),
                   .wall_time = sweep::utc_now()});
    batcher.flush();
    std::cout << batcher.points_written() << '\n';
    return 0;
  }
  if (mode == "poll-reads" && argc == 5) {
    sweep::Store store(db, {.read_only = true});
    const std::filesystem::path stop = argv[4];
    long polls = 0;
    do {
      for (const auto& summary : store.list_sweeps()) {
        std::size_t points = 0;
        store.for_each_metric(summary.sweep.id, [&](const sweep::MetricPoint&) { ++points; });
        store.latest_metrics(summary.sweep.id);
        store.export_table(summary.sweep.id);
        store.best_trial(summary.sweep.id);
      }
      ++polls;
    } while (!std::filesystem::exists(stop));
    std::cout << polls << '\n';
    return 0;
  }
  if (mode == "write-until-killed" && argc == 5) {
    sweep::Store store(db);
    const std::int64_t trial_id = std::stoll(argv[4]);
    std::vector<sweep::MetricPoint> batch(100);
    for (std::int64_t step = 0;;) {
      for (auto& p : batch)
        p = {.trial_id = trial_id,
             .name = "loss",
             .step = step++,
             .epoch = std::nullopt,
             .value = 0.5,
             .wall_time = 0};
      store.log_metrics(batch);
    }
  }
  if (mode == "open-fresh" && argc == 4) {
    sweep::Store store(db);
    std::cout << store.enqueue_job({.config_path = worker_name(), .config_yaml = "name: x"})
              << '\n';
    return 0;
  }
  std::cerr << "store_test_helper: unknown mode or wrong arguments: " << mode << '\n';
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "store_test_helper " << (argc > 1 ? argv[1] : "") << ": " << e.what() << '\n';
    return 1;
  }
}
