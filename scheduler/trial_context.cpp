/*
 * trial_context.cpp — the TrialFn's line back to the executor.
 *
 * Once a trial's on_finished was sent (normally after the TrialFn returned; earlier only when the
 * timeout watchdog gave up on it), everything it still reports is dropped: a zombie TrialFn must
 * not write metrics after its final row, nor sway the stopping policy.
 */
#include <algorithm>
#include <cmath>

#include "scheduler/detail/executor_core.h"
#include "scheduler/detail/trial_record.h"
#include "scheduler/trial.h"

namespace sweep::scheduler {

const Device& TrialContext::device() const { return *record_.device; }
const std::vector<Device>& TrialContext::devices() const { return record_.devices; }
const TrialSpec& TrialContext::spec() const { return record_.spec; }

void TrialContext::report(std::string name, double value, std::int64_t step, std::int64_t epoch) {
  report(MetricPoint{std::move(name), value, step, epoch, 0});
}

void TrialContext::report(const MetricPoint& point) {
  MetricPoint stamped = point;
  if (stamped.wall_time == 0) stamped.wall_time = wall_clock_now();
  if (stamped.epoch > 0) {
    std::lock_guard lock(record_.mutex);
    record_.reported_epoch = std::max(record_.reported_epoch, stamped.epoch);
  }
  {
    std::lock_guard events(record_.events_mutex);
    if (record_.events_closed) return;
    for (const auto& sink : record_.core->sinks) sink->on_metric(record_.spec, stamped);
    if (record_.callbacks.on_metric) record_.callbacks.on_metric(stamped);
  }
  const auto& policy = record_.core->stopping_policy;
  if (!policy) return;
  StopDecision decision = policy->observe(record_.spec.id, stamped);
  if (decision.stop && !should_stop()) record_.request_stop(StopKind::early_stop, decision.reason);
}

void TrialContext::set_epochs(std::int64_t epochs) {
  std::lock_guard lock(record_.mutex);
  record_.epochs = epochs;
}

bool TrialContext::should_stop() const noexcept { return record_.stop_flag.load(); }
StopKind TrialContext::stop_kind() const noexcept { return record_.stop_kind.load(); }

std::string TrialContext::stop_reason() const {
  std::lock_guard lock(record_.mutex);
  return record_.stop_reason;
}

std::stop_token TrialContext::stop_token() const noexcept {
  return record_.stop_source.get_token();
}
const std::atomic<bool>& TrialContext::stop_flag() const noexcept { return record_.stop_flag; }
const std::atomic<bool>& TrialContext::interrupt_flag() const noexcept {
  return record_.interrupt_flag;
}

bool TrialContext::wait_for_stop(std::chrono::duration<double> duration) const {
  std::unique_lock lock(record_.mutex);
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration_cast<std::chrono::steady_clock::duration>(duration);
  record_.changed_cv.wait_until(lock, deadline, [&] { return record_.stop_flag.load(); });
  return record_.stop_flag.load();
}

void TrialContext::log(std::string_view line) {
  std::lock_guard events(record_.events_mutex);
  if (record_.events_closed) return;
  for (const auto& sink : record_.core->sinks) sink->on_log(record_.spec, line);
  if (record_.callbacks.on_log) record_.callbacks.on_log(line);
}

void TrialContext::set_progress(double fraction, std::string text) {
  if (!std::isfinite(fraction)) fraction = 0;
  fraction = std::fmin(1.0, std::fmax(0.0, fraction));
  std::lock_guard events(record_.events_mutex);
  if (record_.events_closed) return;
  {
    std::lock_guard lock(record_.mutex);
    record_.progress_fraction = fraction;
    record_.progress_text = text;
  }
  for (const auto& sink : record_.core->sinks) sink->on_progress(record_.spec, fraction, text);
}

}  // namespace sweep::scheduler
