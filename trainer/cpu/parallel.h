/*
 * parallel.h — the two loop shapes the CPU backend uses, on top of oneTBB.
 *
 * for_range splits [0, n) into chunks of at least `grain` and runs serially when n is below one
 * grain, because entering TBB costs microseconds and most activations of small models are tiny.
 * for_slices hands out a FIXED number of slices (independent of the thread count), which is what
 * the reductions use so that their summation order, and so their result, never changes.
 * Inside a SerialScope (a backend of one thread) both run on the calling thread without entering
 * TBB at all: the same slices in order, so the same numbers, and no task objects. A sweep's CPU
 * trials and a fused array's members run on one thread each, several at once; TBB's tasks come
 * from its own pools, handed between threads where ThreadSanitizer cannot see (TrainArray.* under
 * run-tests reported races between members' tasks), and cost microseconds a call besides.
 */
#pragma once

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <cstddef>

namespace sweep::trainer::cpu {

// Set on this thread while a one-thread backend runs an op (CpuBackend::run).
inline thread_local bool serial_here = false;

class SerialScope {
 public:
  SerialScope() : was_(serial_here) { serial_here = true; }
  ~SerialScope() { serial_here = was_; }
  SerialScope(const SerialScope&) = delete;
  SerialScope& operator=(const SerialScope&) = delete;

 private:
  bool was_;
};

// Which per-thread scratch slot the calling thread owns: its index in the backend's arena, 0 when
// serial (no arena).
inline std::size_t thread_slot() {
  return serial_here ? 0 : static_cast<std::size_t>(tbb::this_task_arena::current_thread_index());
}

template <class F>
void for_range(std::size_t n, std::size_t grain, F&& body) {
  if (n == 0) return;
  if (n <= grain || serial_here) {
    body(std::size_t{0}, n);
    return;
  }
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, grain),
                    [&](const tbb::blocked_range<std::size_t>& r) { body(r.begin(), r.end()); });
}

// Slice s of `slices` covers [n * s / slices, n * (s + 1) / slices).
inline std::size_t slice_begin(std::size_t n, std::size_t slices, std::size_t s) {
  return n * s / slices;
}

template <class F>
void for_slices(std::size_t slices, F&& body) {
  if (slices == 1 || serial_here) {
    for (std::size_t s = 0; s < slices; ++s) body(s);
    return;
  }
  tbb::parallel_for(std::size_t{0}, slices, [&](std::size_t s) { body(s); });
}

// How many tasks to split `work` units (multiply-adds, values) into: one per thread at most, and
// none smaller than `min_work`, so a small product stays one sgemm call on the calling thread.
inline std::size_t task_count(std::size_t work, std::size_t min_work, int threads) {
  const std::size_t by_work = std::max<std::size_t>(1, work / std::max<std::size_t>(1, min_work));
  return std::min<std::size_t>(by_work, std::size_t(std::max(threads, 1)));
}

// Elementwise ops below this many values run on the calling thread.
constexpr std::size_t kElementwiseGrain = 1 << 15;

}  // namespace sweep::trainer::cpu
