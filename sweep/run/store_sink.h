/*
 * store_sink.h — the scheduler's events written to the store: trial states, wait reasons,
 * metrics (through a MetricBatcher, so a training loop never waits on SQLite), events, and each
 * built-in trial's log lines into trials/NNN/log.txt.
 *
 * The scheduler's TrialSpec::id is the store's trial id (run_sweep submits them so). Before a
 * trial's final state is written its metrics are flushed, so a reader that sees `completed` also
 * sees every point the trial reported.
 */
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "common/own_file_stream.h"
#include "scheduler/event_sink.h"
#include "store/metric_batcher.h"
#include "store/store.h"

namespace sweep::run {

// Where a trial writes, as paths this process opens (OUT/NAME/trials/NNN/...). The store keeps
// them relative to the sweep's directory (trials/NNN/log.txt), so a copied or moved sweep
// directory still finds its own files.
struct TrialPaths {
  std::string trial_dir;
  std::string log_path;         // OUT/NAME/trials/NNN/log.txt
  std::string checkpoint_path;  // "" for trials that do not checkpoint (external commands)
  bool write_log = true;        // false: the trial writes its log itself (external commands)
};

class StoreSink : public scheduler::EventSink {
 public:
  // `run_dir` is OUT/NAME: stored paths are made relative to it.
  StoreSink(Store& store, std::int64_t sweep_id, std::filesystem::path run_dir,
            std::map<std::int64_t, TrialPaths> paths);
  ~StoreSink() override;

  void on_queued(const scheduler::TrialSpec& spec, const std::string& wait_reason) override;
  void on_wait_reason(const scheduler::TrialSpec& spec, const std::string& reason) override;
  void on_started(const scheduler::TrialSpec& spec,
                  const std::vector<scheduler::Device>& devices) override;
  void on_metric(const scheduler::TrialSpec& spec, const scheduler::MetricPoint& point) override;
  void on_log(const scheduler::TrialSpec& spec, std::string_view line) override;
  void on_finished(const scheduler::TrialSpec& spec, const scheduler::TrialOutcome& outcome,
                   const std::optional<scheduler::Device>& device) override;

  void flush() { batcher_.flush(); }
  // Where a trial made after the sink writes (a tpe sweep makes its trials as it goes).
  void add_paths(std::int64_t trial_id, TrialPaths paths);

  // The first failure to write the store (a full disk, a file-size limit, a record that could not
  // be written), or "". A sweep whose store cannot be written stops launching trials: their
  // results would be lost.
  std::string failure() const;

 private:
  std::string stored(const std::string& path) const;  // relative to run_dir_
  std::optional<TrialPaths> paths_of(std::int64_t trial_id) const;
  // Runs `write`, remembering the first failure (then rethrowing it to the executor).
  template <class Write>
  void recorded(Write&& write);

  Store& store_;
  const std::int64_t sweep_id_;
  const std::filesystem::path run_dir_;
  mutable std::mutex paths_mutex_;
  std::map<std::int64_t, TrialPaths> paths_;
  MetricBatcher batcher_;
  mutable std::mutex failure_mutex_;
  std::string failure_;
  std::mutex logs_mutex_;
  std::map<std::int64_t, std::unique_ptr<OwnFileStream>> logs_;  // open log files by trial id
};

}  // namespace sweep::run
