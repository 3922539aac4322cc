/*
 * pending_ranges.h — the memory that work queued on a second stream still reads or writes, so an
 * op about to run on the first stream knows whether it must wait for that work.
 *
 * The CUDA backend runs each layer's weight gradient on a side stream while the main stream goes
 * on with the data gradients (cuda_side_stream.cu). Within a plain sequence of layers every
 * activation and gradient has its own buffer, but a residual block's ping-pong buffers are
 * rewritten a layer later: a data gradient may write the very dy a queued weight gradient still
 * reads. Each op on the main stream therefore checks what it reads and writes against what the
 * side stream's queued work reads and writes, and waits only on a real conflict (a write against
 * a read or a write, either way). Plain C++ with no CUDA: the rules are tested without a device.
 */
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <vector>

#include "trainer/backend/backend.h"

namespace sweep::trainer::cuda {

// [p, p + bytes); a null p or zero bytes is nothing.
struct MemoryRange {
  const void* p = nullptr;
  std::size_t bytes = 0;
};

// n floats at p; n values at p in storage s (half the bytes in bf16).
inline MemoryRange floats(const void* p, std::size_t n) { return {p, n * sizeof(float)}; }
inline MemoryRange stored(const void* p, std::size_t n, Storage s) {
  return {p, storage_bytes(s, n)};
}

class PendingRanges {
 public:
  void add(std::initializer_list<MemoryRange> reads, std::initializer_list<MemoryRange> writes) {
    for (const MemoryRange& r : reads)
      if (r.p && r.bytes) reads_.push_back(r);
    for (const MemoryRange& w : writes)
      if (w.p && w.bytes) writes_.push_back(w);
  }
  // True when an op reading `reads` and writing `writes` would race with the pending work: it
  // writes memory the pending work reads or writes, or reads memory the pending work writes.
  bool conflicts(std::initializer_list<MemoryRange> reads,
                 std::initializer_list<MemoryRange> writes) const {
    for (const MemoryRange& w : writes)
      if (overlaps_any(w, reads_) || overlaps_any(w, writes_)) return true;
    for (const MemoryRange& r : reads)
      if (overlaps_any(r, writes_)) return true;
    return false;
  }
  bool empty() const { return reads_.empty() && writes_.empty(); }
  void clear() {
    reads_.clear();
    writes_.clear();
  }

 private:
  static bool overlaps(const MemoryRange& a, const MemoryRange& b) {
    if (!a.p || !a.bytes || !b.p || !b.bytes) return false;
    const auto a0 = reinterpret_cast<std::uintptr_t>(a.p),
               b0 = reinterpret_cast<std::uintptr_t>(b.p);
    return a0 < b0 + b.bytes && b0 < a0 + a.bytes;
  }
  static bool overlaps_any(const MemoryRange& r, const std::vector<MemoryRange>& set) {
    for (const MemoryRange& s : set)
      if (overlaps(r, s)) return true;
    return false;
  }
  std::vector<MemoryRange> reads_, writes_;
};

}  // namespace sweep::trainer::cuda
