/*
 * reduce.h — sums over a contiguous run of floats that the compiler can vectorise.
 *
 * A plain `for (...) acc += x[i]` is a serial dependency chain in strict IEEE order, so without
 * -ffast-math it never vectorises. Sixteen independent float lanes, added together in a fixed
 * order at the end, vectorise and stay deterministic. Runs here are at most one plane of one
 * channel (a few thousand values), short enough that float lanes lose nothing that matters; the
 * callers add the runs up in double.
 */
#pragma once

#include <cstddef>

namespace sweep::trainer::cpu {

constexpr int kLanes = 16;

// sum(p[i])
inline float lane_sum(const float* __restrict p, std::size_t n) {
  float acc[kLanes] = {};
  std::size_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int l = 0; l < kLanes; ++l) acc[l] += p[i + l];
  float tail = 0.f;
  for (; i < n; ++i) tail += p[i];
  for (int l = 0; l < kLanes; ++l) tail += acc[l];
  return tail;
}

// sum((p[i] - shift)^2)
inline float lane_sum_sq_dev(const float* __restrict p, std::size_t n, float shift) {
  float acc[kLanes] = {};
  std::size_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int l = 0; l < kLanes; ++l) {
      const float d = p[i + l] - shift;
      acc[l] += d * d;
    }
  float tail = 0.f;
  for (; i < n; ++i) tail += (p[i] - shift) * (p[i] - shift);
  for (int l = 0; l < kLanes; ++l) tail += acc[l];
  return tail;
}

// sum(d[i]) and sum(d[i] * (x[i] - shift)) in one pass
inline void lane_sum_dot(const float* __restrict d, const float* __restrict x, std::size_t n,
                         float shift, float& sum_d, float& sum_dx) {
  float a[kLanes] = {}, b[kLanes] = {};
  std::size_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int l = 0; l < kLanes; ++l) {
      a[l] += d[i + l];
      b[l] += d[i + l] * (x[i + l] - shift);
    }
  float ta = 0.f, tb = 0.f;
  for (; i < n; ++i) {
    ta += d[i];
    tb += d[i] * (x[i] - shift);
  }
  for (int l = 0; l < kLanes; ++l) {
    ta += a[l];
    tb += b[l];
  }
  sum_d = ta;
  sum_dx = tb;
}

}  // namespace sweep::trainer::cpu
