/*
 * metric_batcher.h — collects metric points from many threads and writes them in batches.
 *
 * The decision: one background thread owns the writing, and producers only append to a vector
 * under a mutex, so a training loop never waits for SQLite. A batch is written in ONE
 * transaction when it reaches max_rows points, when max_delay passed since the last write, on
 * flush() and on destruction: SQLite's cost is per transaction (the WAL append and its sync),
 * so batching turns thousands of commits a second into a few.
 *
 * Thread safety: add() and flush() may be called from any thread at the same time.
 *
 *   sweep::MetricBatcher batcher(store);
 *   batcher.add({.trial_id = id, .name = "train_loss", .step = it, .value = loss,
 *                .wall_time = sweep::utc_now()});
 *   batcher.flush();   // before reporting the trial finished
 */
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <mutex>
#include <span>
#include <thread>
#include <vector>

#include "store/store.h"

namespace sweep {

struct MetricBatcherOptions {
  std::size_t max_rows = 4096;               // write when this many points wait
  std::chrono::milliseconds max_delay{200};  // ... or when the oldest waited this long
  std::size_t max_pending = 1 << 18;         // add() blocks above this (the writer fell behind)
};

class MetricBatcher {
 public:
  explicit MetricBatcher(Store& store, MetricBatcherOptions options = {});
  // Writes what is still pending; a write error is printed to stderr (destructors do not throw).
  ~MetricBatcher();
  MetricBatcher(const MetricBatcher&) = delete;
  MetricBatcher& operator=(const MetricBatcher&) = delete;

  // Queues points. Throws the error of an earlier failed batch (once), whose points were lost.
  void add(const MetricPoint& point);
  void add(std::span<const MetricPoint> points);
  // Blocks until every point added before this call is committed; throws a write error.
  void flush();

  std::uint64_t points_written() const;  // committed so far (for tests and benchmarks)

 private:
  void run();
  void rethrow_pending_error(std::unique_lock<std::mutex>& lock);

  Store& store_;
  const MetricBatcherOptions options_;
  mutable std::mutex mutex_;
  std::condition_variable wake_writer_;  // points arrived / flush asked / stopping
  std::condition_variable progress_;     // a batch was written (or failed)
  std::vector<MetricPoint> pending_;
  std::uint64_t added_ = 0;         // points ever added
  std::uint64_t done_ = 0;          // points handled by the writer (written or failed)
  std::uint64_t written_ = 0;       // points committed
  std::uint64_t flush_wanted_ = 0;  // write at least up to here without waiting for max_delay
  bool stopping_ = false;
  std::exception_ptr error_;
  std::thread writer_;  // last: starts after every member above exists
};

}  // namespace sweep
