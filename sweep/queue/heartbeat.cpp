/*
 * heartbeat.cpp — renew every interval, check for a shutdown request every 100 ms. A renewal that
 * throws (the queue database busy past its retry limit, a disk error) is logged and retried; only
 * a lease period without one successful renewal gives the job up, because by then another worker
 * may already have reclaimed it.
 */
#include "sweep/queue/heartbeat.h"

#include <algorithm>

namespace sweep::queue {

std::string_view describe(StopCause cause) {
  switch (cause) {
    case StopCause::none:
      return "running";
    case StopCause::cancelled:
      return "cancelled by sweep cancel";
    case StopCause::lease_lost:
      return "lease lost (the job was reclaimed by another worker)";
    case StopCause::worker_stopping:
      return "the worker is shutting down";
  }
  return "unknown";
}

Heartbeat::Heartbeat(Store& queue, std::int64_t job_id, std::string owner, HeartbeatTiming timing,
                     std::atomic<bool>& stop, std::function<bool()> shutting_down,
                     const std::filesystem::path& log_path)
    : queue_(queue),
      job_id_(job_id),
      owner_(std::move(owner)),
      timing_(timing),
      stop_(stop),
      shutting_down_(std::move(shutting_down)),
      log_(log_path),
      thread_([this] { loop(); }) {}

Heartbeat::~Heartbeat() {
  {
    std::lock_guard lock(mutex_);
    quit_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void Heartbeat::stop_with(StopCause cause, const std::string& why) {
  StopCause none = StopCause::none;
  if (!cause_.compare_exchange_strong(none, cause)) return;
  {
    std::lock_guard lock(mutex_);
    log_ << "job " << job_id_ << ": stopping: " << why << std::endl;
  }
  stop_.store(true);
}

void Heartbeat::loop() {
  using Clock = std::chrono::steady_clock;
  const auto interval = std::chrono::duration<double>(timing_.interval_s);
  const auto lease = std::chrono::duration<double>(timing_.lease_s);
  auto last_renewal = Clock::now();
  auto next_beat = last_renewal + std::chrono::duration_cast<Clock::duration>(interval);
  std::unique_lock lock(mutex_);
  while (!quit_) {
    wake_.wait_for(lock, kHeartbeatTick);
    if (quit_) break;
    lock.unlock();
    if (shutting_down_ && shutting_down_())
      stop_with(StopCause::worker_stopping, "signal received");
    if (Clock::now() >= next_beat && cause_.load() != StopCause::lease_lost &&
        cause_.load() != StopCause::cancelled) {
      next_beat = Clock::now() + std::chrono::duration_cast<Clock::duration>(interval);
      try {
        if (queue_.heartbeat_job(job_id_, owner_, lease)) {
          last_renewal = Clock::now();
        } else {
          const auto row = queue_.job(job_id_);
          if (row && row->state == JobState::cancelled)
            stop_with(StopCause::cancelled, "the job was cancelled");
          else
            stop_with(StopCause::lease_lost,
                      "the lease is no longer ours (job " +
                          std::string(row ? to_string(row->state) : "gone") +
                          (row ? ", held by '" + row->lease_owner + "'" : std::string()) + ")");
        }
      } catch (const std::exception& e) {
        std::lock_guard log_lock(mutex_);
        log_ << "job " << job_id_ << ": heartbeat failed (retrying): " << e.what() << std::endl;
      }
      if (Clock::now() - last_renewal > lease)
        stop_with(StopCause::lease_lost, "no heartbeat succeeded for a whole lease period");
    }
    lock.lock();
  }
}

}  // namespace sweep::queue
