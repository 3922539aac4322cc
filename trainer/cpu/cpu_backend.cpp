/*
 * cpu_backend.cpp — memory, elementwise ops and dense layers of the CPU backend.
 *
 * Dense products are split across at most one task per thread along a dimension that needs no
 * reduction (batch rows for y and dx, output rows for dw), each slice one single-threaded sgemm, so
 * the result does not depend on how many threads ran it, and a small product stays one call. Memory
 * is 64-byte aligned (AVX-512 loads) and zeroed.
 */
#include "trainer/cpu/cpu_backend.h"

#include <cblas.h>
#include <tbb/info.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "common/check.h"
#include "trainer/cpu/parallel.h"
#include "trainer/rng.h"

namespace sweep::trainer {

using cpu::for_range;
using cpu::kElementwiseGrain;

namespace {

// 0 means every core this process may run on: TBB's default honours the affinity mask (taskset,
// a container's cpuset), where std::thread::hardware_concurrency counts every core of the host.
int resolve_threads(int threads) {
  if (threads > 0) return threads;
  return std::max(1, tbb::info::default_concurrency());
}

std::size_t available_host_bytes() {
  const long pages = ::sysconf(_SC_AVPHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? static_cast<std::size_t>(pages) * static_cast<std::size_t>(page)
                               : 0;
}

// Smallest product worth its own task, in multiply-adds.
constexpr std::size_t kMinGemmWork = std::size_t{1} << 20;
// How many sgemm calls one dense product is split into depends on its size only, never on the
// thread count: OpenBLAS may sum a row in another order when it is part of a smaller call (its
// small-matrix kernels, its tail tiles; seen on AMD EPYC, where 1 and 2 threads trained LeNet to
// different weights), so the same slices on any thread count are what keep every bit the same.
constexpr int kMaxGemmSlices = 8;

}  // namespace

CpuBackend::CpuBackend(int threads)
    : NhwcReference(static_cast<Backend&>(*this)),
      threads_(resolve_threads(threads)),
      arena_(threads_) {
  // TBB owns the threads (see the header); OpenBLAS runs each call on its caller's thread.
  openblas_set_num_threads(1);
}

CpuBackend::~CpuBackend() = default;

std::string CpuBackend::name() const {
  return "cpu (" + std::to_string(threads_) + (threads_ == 1 ? " thread" : " threads") +
         ", OpenBLAS + oneTBB)";
}

void* CpuBackend::allocate(std::size_t bytes) {
  if (bytes == 0) return nullptr;
  const std::size_t rounded = (bytes + 63) / 64 * 64;
  void* p = std::aligned_alloc(64, rounded);
  if (!p) throw OutOfMemory("cpu", bytes, available_host_bytes());
  std::memset(p, 0, rounded);
  return p;
}

void CpuBackend::deallocate(void* p) noexcept { std::free(p); }

void CpuBackend::copy_to_device(void* dst, const void* host_src, std::size_t bytes) {
  if (bytes) std::memcpy(dst, host_src, bytes);
}
void CpuBackend::copy_to_host(void* host_dst, const void* src, std::size_t bytes) {
  if (bytes) std::memcpy(host_dst, src, bytes);
}
void CpuBackend::copy(void* dst, const void* src, std::size_t bytes) {
  if (bytes && dst != src) std::memmove(dst, src, bytes);
}

void CpuBackend::fill(float* x, std::size_t n, float value) {
  run([&] {
    for_range(n, kElementwiseGrain,
              [&](std::size_t b, std::size_t e) { std::fill(x + b, x + e, value); });
  });
}

float* CpuBackend::thread_scratch(std::size_t per_slot) {
  const std::size_t need = per_slot * static_cast<std::size_t>(threads_);
  if (thread_scratch_.size() < need) thread_scratch_.resize(need);
  return thread_scratch_.data();
}
float* CpuBackend::slice_scratch(std::size_t floats) {
  if (slice_scratch_.size() < floats) slice_scratch_.resize(floats);
  return slice_scratch_.data();
}
double* CpuBackend::double_scratch(std::size_t n) {
  if (double_scratch_.size() < n) double_scratch_.resize(n);
  return double_scratch_.data();
}

// ---------------------------------------------------------------- elementwise

void CpuBackend::relu_forward(const float* x, float* y, std::size_t n) {
  run([&] {
    for_range(n, kElementwiseGrain, [&](std::size_t b, std::size_t e) {
      // x <= 0 ? 0 : x, not x > 0 ? x : 0: a NaN stays NaN (as in PyTorch), so a diverging run
      // shows in the loss instead of being hidden behind zeros.
      for (std::size_t i = b; i < e; ++i) y[i] = x[i] <= 0.f ? 0.f : x[i];
    });
  });
}

void CpuBackend::relu_backward(const float* y, const float* dy, float* dx, std::size_t n) {
  run([&] {
    for_range(n, kElementwiseGrain, [&](std::size_t b, std::size_t e) {
      // A bit mask instead of a select: y's sign is random, so a branch mispredicts half the time,
      // and a select with a conditional load does not vectorise. dy & mask keeps the select's
      // meaning exactly (a NaN dy where y <= 0 still gives 0).
      for (std::size_t i = b; i < e; ++i) {
        const std::uint32_t keep = 0u - static_cast<std::uint32_t>(y[i] > 0.f);
        dx[i] = std::bit_cast<float>(std::bit_cast<std::uint32_t>(dy[i]) & keep);
      }
    });
  });
}

void CpuBackend::dropout_forward(const float* x, float* y, float* mask, std::size_t n, float p,
                                 std::uint64_t seed, std::uint64_t counter) {
  const float keep_scale = p < 1.f ? 1.f / (1.f - p) : 0.f;
  run([&] {
    for_range(n, kElementwiseGrain, [&](std::size_t b, std::size_t e) {
      for (std::size_t i = b; i < e; ++i) {
        const float m = uniform01(hash2(seed, counter + i)) < p ? 0.f : keep_scale;
        mask[i] = m;
        y[i] = x[i] * m;
      }
    });
  });
}

void CpuBackend::mul(const float* a, const float* b, float* y, std::size_t n) {
  run([&] {
    for_range(n, kElementwiseGrain, [&](std::size_t lo, std::size_t hi) {
      for (std::size_t i = lo; i < hi; ++i) y[i] = a[i] * b[i];
    });
  });
}

void CpuBackend::add(const float* a, const float* b, float* y, std::size_t n) {
  run([&] {
    for_range(n, kElementwiseGrain, [&](std::size_t lo, std::size_t hi) {
      for (std::size_t i = lo; i < hi; ++i) y[i] = a[i] + b[i];
    });
  });
}

// ---------------------------------------------------------------- channels-last activations

namespace {

// Round to nearest even, as __float2bfloat16_rn; a NaN stays a (quiet) NaN.
Bf16 round_to_bf16(float f) {
  std::uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  if (std::isnan(f)) return Bf16{static_cast<std::uint16_t>((bits >> 16) | 0x40)};
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return Bf16{static_cast<std::uint16_t>(bits >> 16)};
}

float from_bf16(Bf16 b) {
  const std::uint32_t bits = std::uint32_t(b.bits) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// Visits every element of n images of c channels and hw pixels: f(its NCHW index, the index of
// the same element in storage s).
template <class F>
void each_element(Storage s, int n, int c, int hw, F&& f) {
  const std::size_t image = std::size_t(c) * hw;
  for (std::size_t i = 0; i < std::size_t(n); ++i)
    for (std::size_t ci = 0; ci < std::size_t(c); ++ci)
      for (std::size_t p = 0; p < std::size_t(hw); ++p)
        f(i * image + ci * hw + p, is_nhwc(s) ? i * image + p * c + ci : i * image + ci * hw + p);
}

}  // namespace

void CpuBackend::to_storage(Storage s, const float* x, void* y, int n, int c, int hw) {
  if (is_bf16(s))
    each_element(s, n, c, hw, [&](std::size_t from, std::size_t to) {
      static_cast<Bf16*>(y)[to] = round_to_bf16(x[from]);
    });
  else
    each_element(s, n, c, hw,
                 [&](std::size_t from, std::size_t to) { static_cast<float*>(y)[to] = x[from]; });
}

void CpuBackend::from_storage(Storage s, const void* x, float* y, int n, int c, int hw) {
  if (is_bf16(s))
    each_element(s, n, c, hw, [&](std::size_t to, std::size_t from) {
      y[to] = from_bf16(static_cast<const Bf16*>(x)[from]);
    });
  else
    each_element(s, n, c, hw, [&](std::size_t to, std::size_t from) {
      y[to] = static_cast<const float*>(x)[from];
    });
}

// ---------------------------------------------------------------- dense

void CpuBackend::dense_forward(const float* x, const float* w, const float* b, float* y, int n,
                               int in, int out) {
  const std::size_t tasks =
      cpu::task_count(std::size_t(n) * in * out, kMinGemmWork, kMaxGemmSlices);
  run([&] {
    cpu::for_slices(tasks, [&](std::size_t t) {
      const std::size_t r0 = cpu::slice_begin(n, tasks, t), r1 = cpu::slice_begin(n, tasks, t + 1);
      if (r0 == r1) return;
      float* yr = y + r0 * out;
      const int m = static_cast<int>(r1 - r0);
      float beta = 0.f;
      if (b) {
        for (int i = 0; i < m; ++i) std::memcpy(yr + std::size_t(i) * out, b, sizeof(float) * out);
        beta = 1.f;
      }
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, out, in, 1.f, x + r0 * in, in, w, in,
                  beta, yr, out);
    });
  });
}

void CpuBackend::dense_backward(const float* x, const float* w, const float* dy, float* dx,
                                float* dw, float* db, int n, int in, int out) {
  const std::size_t work = std::size_t(n) * in * out;
  // dx rows (samples) and dw rows (output units) are independent: slice them, no reduction.
  const std::size_t dx_tasks = dx ? cpu::task_count(work, kMinGemmWork, kMaxGemmSlices) : 0;
  const std::size_t dw_tasks = cpu::task_count(work, kMinGemmWork, kMaxGemmSlices);
  run([&] {
    cpu::for_slices(dx_tasks + dw_tasks, [&](std::size_t t) {
      if (t < dx_tasks) {
        const std::size_t r0 = cpu::slice_begin(n, dx_tasks, t);
        const std::size_t r1 = cpu::slice_begin(n, dx_tasks, t + 1);
        if (r1 > r0)
          cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(r1 - r0), in, out,
                      1.f, dy + r0 * out, out, w, in, 0.f, dx + r0 * in, in);
        return;
      }
      t -= dx_tasks;
      const std::size_t o0 = cpu::slice_begin(out, dw_tasks, t);
      const std::size_t o1 = cpu::slice_begin(out, dw_tasks, t + 1);
      if (o1 == o0) return;
      cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, static_cast<int>(o1 - o0), in, n, 1.f,
                  dy + o0, out, x, in, 0.f, dw + o0 * in, in);
      if (db) {
        for (std::size_t o = o0; o < o1; ++o) db[o] = 0.f;
        for (int i = 0; i < n; ++i) {
          const float* row = dy + std::size_t(i) * out;
          for (std::size_t o = o0; o < o1; ++o) db[o] += row[o];
        }
      }
    });
  });
}

}  // namespace sweep::trainer
