// Ctrl-C while trials still wait in the executor's queue (a 2-GPU trial waiting for its GPUs, a
// trial just handed to a busy slot): the running trial ends `interrupted`, but one that never
// started stays `queued` in the store — not counted as interrupted — so `sweep resume` runs it.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <map>
#include <thread>

#include "scheduler/scheduler.h"
#include "store/store.h"
#include "sweep/run/store_sink.h"

namespace sweep::run {
namespace {

namespace fs = std::filesystem;

TEST(InterruptQueued, ATrialThatNeverStartedStaysQueued) {
  const fs::path dir =
      fs::temp_directory_path() / ("sweep_interrupt_queued_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::vector<std::int64_t> ids;
  {
    Store store(dir / "sweep.db");
    SweepSpec sweep;
    sweep.name = "q";
    sweep.metric_name = "val_accuracy";
    const std::int64_t sweep_id = store.create_sweep(sweep);
    std::vector<TrialSpec> rows(2);
    rows[1].number = 1;
    ids = store.add_trials(sweep_id, rows);
    auto sink =
        std::make_shared<StoreSink>(store, sweep_id, dir, std::map<std::int64_t, TrialPaths>{});
    scheduler::ExecutorOptions options;
    options.devices = {scheduler::Device::cpu()};
    options.cpu_slots = 1;
    scheduler::Executor executor(options, {sink});
    std::atomic<bool> running{false};
    std::vector<scheduler::TrialFuture> futures;
    for (std::size_t i = 0; i < ids.size(); ++i) {
      scheduler::TrialSpec spec;
      spec.id = ids[i];
      spec.number = static_cast<std::int64_t>(i);
      futures.push_back(executor.submit(spec, [&running](scheduler::TrialContext& context) {
        running = true;
        context.wait_for_stop(std::chrono::seconds(30));  // "trains" until Ctrl-C
        return scheduler::TrialOutcome{TrialState::interrupted, "checkpoint saved", {}};
      }));
    }
    while (!running) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    executor.interrupt("interrupted by Ctrl-C");  // trial 1 still waits for the one slot
    executor.shutdown();
    sink->flush();
    EXPECT_EQ(futures[1].state(), TrialState::interrupted);  // the executor's own view
    EXPECT_FALSE(futures[1].device());
    const auto first = store.trial(ids[0]);
    const auto second = store.trial(ids[1]);
    EXPECT_EQ(first->state, TrialState::interrupted);
    EXPECT_EQ(second->state, TrialState::queued) << "a trial that never started was counted";
    EXPECT_EQ(second->attempts, 0);
    EXPECT_EQ(second->stop_reason, "");
    EXPECT_EQ(second->wait_reason, "");
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace sweep::run
