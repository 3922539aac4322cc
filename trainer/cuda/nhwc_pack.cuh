/*
 * nhwc_pack.cuh — what the NHWC activation kernels (nhwc_batchnorm.cu, nhwc_conv_bias.cu,
 * nhwc_elementwise.cu, nhwc_pool.cu) share to move values: bf16 or fp32 elements widened to float
 * and narrowed back, packs of consecutive channels moved as one access, the widest pack a shape
 * and its pointers allow, and the 32-bit size check their index arithmetic needs.
 *
 * Every kernel is memory-bound, so the layout of the accesses is the design: consecutive threads
 * take consecutive channels (the contiguous dimension of NHWC), and a thread moves several
 * channels in one access where the address allows it: 16 bytes (8 bf16, 4 floats), else a pair of
 * values (4 or 8 bytes), else one.
 */
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

#include "common/check.h"

namespace sweep::trainer::cuda::nhwc {

using bf16 = __nv_bfloat16;

// ----------------------------------------------------------------------- loads and stores

// The element types: loads widen to float exactly; stores round bf16 to nearest even and keep
// floats as they are. Bits: what a pack holds (bf16 as its raw bits, so a pack is a plain array).
template <class T>
struct Elem;

template <>
struct Elem<bf16> {
  using Bits = unsigned short;
  static __device__ __forceinline__ float widen(Bits b) {
    return __bfloat162float(__ushort_as_bfloat16(b));
  }
  static __device__ __forceinline__ Bits narrow(float v) {
    return __bfloat16_as_ushort(__float2bfloat16_rn(v));
  }
};

template <>
struct Elem<float> {
  using Bits = float;
  static __device__ __forceinline__ float widen(Bits b) { return b; }
  static __device__ __forceinline__ Bits narrow(float v) { return v; }
};

// One value at a time.
__device__ __forceinline__ float widen(bf16 v) { return __bfloat162float(v); }
__device__ __forceinline__ float widen(float v) { return v; }

template <class T>
__device__ __forceinline__ T narrow(float v);
template <>
__device__ __forceinline__ bf16 narrow<bf16>(float v) {
  return __float2bfloat16_rn(v);
}
template <>
__device__ __forceinline__ float narrow<float>(float v) {
  return v;
}

// Values in the widest pack: 16 bytes.
template <class T>
constexpr int kWide = int(16 / sizeof(T));

// V consecutive values moved as one access: the caller makes sure the address is aligned to the
// whole pack (sizeof(T) * V bytes).
template <class T, int V>
struct alignas(sizeof(T) * V) Pack {
  typename Elem<T>::Bits bits[V];
};

template <class T, int V>
__device__ __forceinline__ void load(const T* p, float (&v)[V]) {
  const Pack<T, V> k = *reinterpret_cast<const Pack<T, V>*>(p);
#pragma unroll
  for (int j = 0; j < V; ++j) v[j] = Elem<T>::widen(k.bits[j]);
}

template <class T, int V>
__device__ __forceinline__ void store(T* p, const float (&v)[V]) {
  Pack<T, V> k;
#pragma unroll
  for (int j = 0; j < V; ++j) k.bits[j] = Elem<T>::narrow(v[j]);
  *reinterpret_cast<Pack<T, V>*>(p) = k;
}

// P values as one access (kVec) or one by one (an address not aligned for the pack).
template <int P, bool kVec, class T>
__device__ __forceinline__ void load_n(const T* p, float (&v)[P]) {
  if constexpr (kVec) {
    load<T, P>(p, v);
  } else {
#pragma unroll
    for (int j = 0; j < P; ++j) v[j] = widen(p[j]);
  }
}

template <int P, bool kVec, class T>
__device__ __forceinline__ void store_n(T* p, const float (&v)[P]) {
  if constexpr (kVec) {
    store<T, P>(p, v);
  } else {
#pragma unroll
    for (int j = 0; j < P; ++j) p[j] = narrow<T>(v[j]);
  }
}

inline bool aligned(const void* p, std::size_t bytes) {
  return reinterpret_cast<std::uintptr_t>(p) % bytes == 0;
}

// The widest pack of T (16 bytes: kWide<T> values; else 2 values; else 1) that divides c and
// whose accesses every pointer (all T) allows.
template <class T, class... Ptr>
int pack_for(int c, Ptr... ptrs) {
  static_assert((std::is_same_v<std::remove_cv_t<std::remove_pointer_t<Ptr>>, T> && ...));
  if (c % kWide<T> == 0 && (aligned(ptrs, 16) && ...)) return kWide<T>;
  if (c % 2 == 0 && (aligned(ptrs, 2 * sizeof(T)) && ...)) return 2;
  return 1;
}

// The pooling and batch-norm kernels index with 32-bit arithmetic (a 64-bit division per element
// costs more than the memory traffic).
inline unsigned checked_size(const char* op, std::size_t size) {
  if (size >= (std::size_t{1} << 31))
    throw Error(std::string(op) + ": " + std::to_string(size) +
                " values is more than the CUDA kernels take (2^31)");
  return static_cast<unsigned>(size);
}

// An op's name for T's messages (literals: nothing built per launch).
template <class T>
constexpr const char* name_for(const char* bf16_name, const char* fp32_name) {
  return std::is_same_v<T, bf16> ? bf16_name : fp32_name;
}

// Calls launch(integral_constant<int, V>) for pack V of T (pack_for's: kWide<T>, 2 or 1).
template <class T, class Launch>
void by_pack(int pack, Launch&& launch) {
  if (pack == kWide<T>)
    launch(std::integral_constant<int, kWide<T>>{});
  else if (pack == 2)
    launch(std::integral_constant<int, 2>{});
  else
    launch(std::integral_constant<int, 1>{});
}

}  // namespace sweep::trainer::cuda::nhwc
