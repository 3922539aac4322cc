/*
 * store_sink.cpp — one trial's events arrive in order on one thread at a time (event_sink.h), but
 * different trials' concurrently: the Store and the MetricBatcher are thread-safe, and the map of
 * open log files has its own mutex.
 */
#include "sweep/run/store_sink.h"

#include <filesystem>

namespace sweep::run {

StoreSink::StoreSink(Store& store, std::int64_t sweep_id, std::filesystem::path run_dir,
                     std::map<std::int64_t, TrialPaths> paths)
    : store_(store),
      sweep_id_(sweep_id),
      run_dir_(std::move(run_dir)),
      paths_(std::move(paths)),
      batcher_(store) {}

void StoreSink::add_paths(std::int64_t trial_id, TrialPaths paths) {
  std::lock_guard lock(paths_mutex_);
  paths_[trial_id] = std::move(paths);
}

std::optional<TrialPaths> StoreSink::paths_of(std::int64_t trial_id) const {
  std::lock_guard lock(paths_mutex_);
  const auto it = paths_.find(trial_id);
  if (it == paths_.end()) return std::nullopt;
  return it->second;
}

template <class Write>
void StoreSink::recorded(Write&& write) {
  try {
    write();
  } catch (const std::exception& e) {
    // The store itself failed (disk, limit, damage), or what was to be written could not be (a
    // summary's JSON threw on bytes that were not UTF-8, which left a finished trial `running`
    // while the sweep ended 0): either way the store no longer says what happened, so the sweep
    // stops and says so, as for a full disk.
    std::lock_guard lock(failure_mutex_);
    if (failure_.empty()) failure_ = e.what();
    throw;
  }
}

std::string StoreSink::failure() const {
  std::lock_guard lock(failure_mutex_);
  return failure_;
}

std::string StoreSink::stored(const std::string& path) const {
  return std::filesystem::path(path).lexically_relative(run_dir_).string();
}

StoreSink::~StoreSink() = default;

void StoreSink::on_queued(const scheduler::TrialSpec& spec, const std::string& wait_reason) {
  recorded([&] {
    if (!wait_reason.empty()) store_.set_wait_reason(spec.id, wait_reason);
  });
}

void StoreSink::on_wait_reason(const scheduler::TrialSpec& spec, const std::string& reason) {
  recorded([&] { store_.set_wait_reason(spec.id, reason); });
}

void StoreSink::on_started(const scheduler::TrialSpec& spec,
                           const std::vector<scheduler::Device>& devices) {
  recorded([&] {
    if (!store_.claim_trial(spec.id, scheduler::devices_label(devices)))
      throw Error("trial " + std::to_string(spec.number) + " is no longer queued in " +
                  store_.path().string() + " (another process ran or cancelled it)");
    TrialUpdate update;
    if (const auto paths = paths_of(spec.id)) {
      update.log_path = stored(paths->log_path);
      std::filesystem::create_directories(paths->trial_dir);
      const bool resumed =
          !paths->checkpoint_path.empty() && std::filesystem::exists(paths->checkpoint_path);
      if (resumed)
        store_.add_event(sweep_id_, spec.id, "resumed",
                         "trial " + std::to_string(spec.number) + " continues from " +
                             stored(paths->checkpoint_path));
    }
    store_.update_trial(spec.id, update);
    store_.add_event(sweep_id_, spec.id, "started",
                     "trial " + std::to_string(spec.number) + " started on " +
                         scheduler::devices_label(devices));
  });
}

void StoreSink::on_metric(const scheduler::TrialSpec& spec, const scheduler::MetricPoint& point) {
  recorded([&] {
    MetricPoint row;
    row.trial_id = spec.id;
    row.name = point.name;
    row.step = point.step;
    if (point.epoch > 0)
      row.epoch = static_cast<double>(point.epoch);
    else if (point.epoch_position > 0)
      row.epoch = point.epoch_position;
    row.value = point.value;
    row.wall_time = point.wall_time;
    batcher_.add(row);
    // An epoch's points are durable before the trainer writes that epoch's checkpoint (on_metric
    // runs on the trial's thread, and the trainer saves right after its validation callback
    // returns): a process killed after the checkpoint never loses points the resumed trial will
    // not report again. Points with an epoch are only the few per epoch end.
    if (point.epoch > 0) batcher_.flush();
  });
}

void StoreSink::on_log(const scheduler::TrialSpec& spec, std::string_view line) {
  const auto paths = paths_of(spec.id);
  if (!paths || !paths->write_log) return;
  std::lock_guard lock(logs_mutex_);
  auto& file = logs_[spec.id];
  if (!file) {
    std::filesystem::create_directories(paths->trial_dir);
    // Never through a symbolic link (common/own_file.h): a link there fails the trial.
    file = std::make_unique<OwnFileStream>(paths->log_path);
  }
  *file << line << '\n';
  file->flush();
}

void StoreSink::on_finished(const scheduler::TrialSpec& spec,
                            const scheduler::TrialOutcome& outcome,
                            const std::optional<scheduler::Device>& device) {
  recorded([&] {
    batcher_.flush();
    // Interrupted before it started (Ctrl-C while it waited for a slot): it never ran, so it stays
    // queued, is not counted as interrupted, and `sweep resume` runs it like any queued trial.
    if (!device && outcome.state == TrialState::interrupted) {
      store_.set_wait_reason(spec.id, "");
      return;
    }
    TrialUpdate update;
    update.summary = outcome.summary;
    if (outcome.state == TrialState::failed) {
      update.error = outcome.message;
    } else if (!outcome.message.empty()) {
      update.stop_reason = outcome.message;
    }
    if (const auto paths = paths_of(spec.id);
        paths && !paths->checkpoint_path.empty() && std::filesystem::exists(paths->checkpoint_path))
      update.checkpoint_path = stored(paths->checkpoint_path);
    store_.set_trial_state(spec.id, outcome.state, update);
    std::string message =
        "trial " + std::to_string(spec.number) + " " + std::string(to_string(outcome.state));
    if (!outcome.message.empty()) message += ": " + outcome.message;
    if (!device) message += " (never started)";
    store_.add_event(sweep_id_, spec.id, std::string(to_string(outcome.state)), message);
    std::lock_guard lock(logs_mutex_);
    logs_.erase(spec.id);
  });
}

}  // namespace sweep::run
