/*
 * metric_batcher.cpp — the writer thread behind MetricBatcher.
 *
 * The decision: the writer swaps the whole pending vector out under the lock and writes it with
 * the lock released, so producers keep appending while SQLite commits; progress is counted in
 * points (added_ / done_), which is what lets flush() wait for exactly "everything before me".
 */
#include "store/metric_batcher.h"

#include <cstdio>

#include "common/check.h"

namespace sweep {
namespace {
// Checked before the writer thread starts: a constructor that throws after starting it would
// leave a joinable std::thread behind (std::terminate).
MetricBatcherOptions validated(MetricBatcherOptions o) {
  if (o.max_rows == 0) throw Error("MetricBatcher: max_rows must be at least 1");
  if (o.max_pending < o.max_rows) throw Error("MetricBatcher: max_pending must be >= max_rows");
  return o;
}
}  // namespace

MetricBatcher::MetricBatcher(Store& store, MetricBatcherOptions options)
    : store_(store), options_(validated(options)), writer_([this] { run(); }) {}

MetricBatcher::~MetricBatcher() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_writer_.notify_one();
  writer_.join();
  if (error_) {
    try {
      std::rethrow_exception(error_);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "sweep: metric points were lost: %s\n", e.what());
    }
  }
}

void MetricBatcher::rethrow_pending_error(std::unique_lock<std::mutex>& lock) {
  if (!error_) return;
  auto e = std::exchange(error_, nullptr);
  lock.unlock();
  std::rethrow_exception(e);
}

void MetricBatcher::add(const MetricPoint& point) { add(std::span<const MetricPoint>(&point, 1)); }

void MetricBatcher::add(std::span<const MetricPoint> points) {
  std::unique_lock lock(mutex_);
  rethrow_pending_error(lock);
  progress_.wait(lock, [&] { return pending_.size() < options_.max_pending || stopping_; });
  pending_.insert(pending_.end(), points.begin(), points.end());
  added_ += points.size();
  if (pending_.size() >= options_.max_rows) wake_writer_.notify_one();
}

void MetricBatcher::flush() {
  std::unique_lock lock(mutex_);
  const std::uint64_t target = added_;
  flush_wanted_ = std::max(flush_wanted_, target);
  wake_writer_.notify_one();
  progress_.wait(lock, [&] { return done_ >= target; });
  rethrow_pending_error(lock);
}

std::uint64_t MetricBatcher::points_written() const {
  std::lock_guard lock(mutex_);
  return written_;
}

void MetricBatcher::run() {
  std::unique_lock lock(mutex_);
  std::vector<MetricPoint> batch;
  for (;;) {
    wake_writer_.wait_for(lock, options_.max_delay, [&] {
      return stopping_ || pending_.size() >= options_.max_rows || flush_wanted_ > done_;
    });
    if (pending_.empty()) {
      if (stopping_) return;
      continue;
    }
    batch.clear();
    batch.swap(pending_);
    const std::uint64_t upto = added_;
    lock.unlock();
    progress_.notify_all();  // producers blocked on max_pending may go on
    std::exception_ptr failure;
    try {
      store_.log_metrics(batch);
    } catch (...) {
      failure = std::current_exception();
    }
    lock.lock();
    if (failure) {
      error_ = failure;
    } else {
      written_ += batch.size();
    }
    done_ = upto;
    progress_.notify_all();
  }
}

}  // namespace sweep
