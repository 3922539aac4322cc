/*
 * cuda_raii.h — owning wrappers for the CUDA, cuBLAS and cuDNN handles one backend holds.
 *
 * Each wrapper creates in its constructor (through common/check.h, so a failure throws) and
 * destroys in its destructor with SWEEP_LOG_ON_ERROR (destructors never throw). They are move-only
 * so a backend can be moved around without double frees. Destruction order matters for a finished
 * trial to give back every byte: the backend declares its members so that buffers go before the
 * handles that may still reference them (C++ destroys members in reverse order).
 */
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <cstddef>
#include <utility>

#include "common/check.h"

namespace sweep::trainer::cuda {

// A unique owner of one handle; Traits supplies create/destroy.
template <class Traits>
class Handle {
 public:
  using T = typename Traits::Type;
  Handle() = default;
  explicit Handle(T h) : h_(h) {}
  ~Handle() { reset(); }
  Handle(Handle&& o) noexcept : h_(std::exchange(o.h_, T{})) {}
  Handle& operator=(Handle&& o) noexcept {
    if (this != &o) {
      reset();
      h_ = std::exchange(o.h_, T{});
    }
    return *this;
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  T get() const { return h_; }
  explicit operator bool() const { return h_ != T{}; }
  void reset() noexcept {
    if (h_ != T{}) Traits::destroy(h_);
    h_ = T{};
  }

 private:
  T h_{};
};

struct StreamTraits {
  using Type = cudaStream_t;
  static void destroy(Type s) noexcept {
    SWEEP_LOG_ON_ERROR(cudaStreamDestroy(s) == cudaSuccess, "cudaStreamDestroy");
  }
};
struct EventTraits {
  using Type = cudaEvent_t;
  static void destroy(Type e) noexcept {
    SWEEP_LOG_ON_ERROR(cudaEventDestroy(e) == cudaSuccess, "cudaEventDestroy");
  }
};
struct CublasTraits {
  using Type = cublasHandle_t;
  static void destroy(Type h) noexcept {
    SWEEP_LOG_ON_ERROR(cublasDestroy(h) == CUBLAS_STATUS_SUCCESS, "cublasDestroy");
  }
};
struct CudnnTraits {
  using Type = cudnnHandle_t;
  static void destroy(Type h) noexcept {
    SWEEP_LOG_ON_ERROR(cudnnDestroy(h) == CUDNN_STATUS_SUCCESS, "cudnnDestroy");
  }
};
struct GraphTraits {
  using Type = cudaGraph_t;
  static void destroy(Type g) noexcept {
    SWEEP_LOG_ON_ERROR(cudaGraphDestroy(g) == cudaSuccess, "cudaGraphDestroy");
  }
};
struct GraphExecTraits {
  using Type = cudaGraphExec_t;
  static void destroy(Type g) noexcept {
    SWEEP_LOG_ON_ERROR(cudaGraphExecDestroy(g) == cudaSuccess, "cudaGraphExecDestroy");
  }
};

using Stream = Handle<StreamTraits>;
using Event = Handle<EventTraits>;
using CublasHandle = Handle<CublasTraits>;
using CudnnHandle = Handle<CudnnTraits>;
using Graph = Handle<GraphTraits>;
using GraphExec = Handle<GraphExecTraits>;

inline Stream make_stream() {
  cudaStream_t s = nullptr;
  SWEEP_CHECK_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  return Stream(s);
}
// A stream of the current device's highest or lowest priority.
enum class Priority { highest, lowest };
inline Stream make_stream(Priority p) {
  int least = 0, greatest = 0;
  SWEEP_CHECK_CUDA(cudaDeviceGetStreamPriorityRange(&least, &greatest));
  cudaStream_t s = nullptr;
  SWEEP_CHECK_CUDA(cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking,
                                                p == Priority::highest ? greatest : least));
  return Stream(s);
}
inline Event make_event(unsigned flags = cudaEventDefault) {
  cudaEvent_t e = nullptr;
  SWEEP_CHECK_CUDA(cudaEventCreateWithFlags(&e, flags));
  return Event(e);
}
inline CublasHandle make_cublas() {
  cublasHandle_t h = nullptr;
  SWEEP_CHECK_CUBLAS(cublasCreate(&h));
  return CublasHandle(h);
}
// A cuDNN handle's own calls (cudnnCreate, cudnnSetStream) on a nearly full device fail with
// CUDNN_STATUS_INTERNAL_ERROR rather than an allocation status (with all but a few hundred MB
// held): counted as out of memory when less than this is free, so a fused array
// sets the member back as for any allocation (train_array.cpp) instead of failing it.
constexpr std::size_t kCudnnHandleRoom = std::size_t{256} << 20;
inline void check_cudnn_handle_call(cudnnStatus_t s, const char* call, const char* file, int line) {
  if (s == CUDNN_STATUS_SUCCESS) return;
  std::size_t free = 0, total = 0;
  const bool full = s == CUDNN_STATUS_ALLOC_FAILED ||
                    (s == CUDNN_STATUS_INTERNAL_ERROR &&
                     cudaMemGetInfo(&free, &total) == cudaSuccess && free < kCudnnHandleRoom);
  throw_call_error(call, short_file(file), line, cudnnGetErrorString(s), full);
}
#define SWEEP_CHECK_CUDNN_HANDLE(call) \
  ::sweep::trainer::cuda::check_cudnn_handle_call((call), #call, __FILE__, __LINE__)

inline CudnnHandle make_cudnn() {
  cudnnHandle_t h = nullptr;
  SWEEP_CHECK_CUDNN_HANDLE(cudnnCreate(&h));
  return CudnnHandle(h);
}

// Device memory owned by the backend itself (workspaces, scratch), freed with cudaFree.
class DeviceMemory {
 public:
  DeviceMemory() = default;
  ~DeviceMemory() { reset(); }
  DeviceMemory(DeviceMemory&& o) noexcept
      : p_(std::exchange(o.p_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
  DeviceMemory& operator=(DeviceMemory&& o) noexcept {
    if (this != &o) {
      reset();
      p_ = std::exchange(o.p_, nullptr);
      bytes_ = std::exchange(o.bytes_, 0);
    }
    return *this;
  }
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;

  // Takes ownership of p (bytes long), freeing what was held.
  void adopt(void* p, std::size_t bytes) noexcept {
    reset();
    p_ = p;
    bytes_ = bytes;
  }
  void reset() noexcept {
    if (p_) SWEEP_LOG_ON_ERROR(cudaFree(p_) == cudaSuccess, "cudaFree");
    p_ = nullptr;
    bytes_ = 0;
  }
  void* get() const { return p_; }
  template <class T>
  T* as() const {
    return static_cast<T*>(p_);
  }
  std::size_t bytes() const { return bytes_; }

 private:
  void* p_ = nullptr;
  std::size_t bytes_ = 0;
};

// Page-locked host memory (cudaMallocHost): what a captured copy may read at replay time.
class PinnedMemory {
 public:
  PinnedMemory() = default;
  explicit PinnedMemory(std::size_t bytes) : bytes_(bytes) {
    SWEEP_CHECK_CUDA(cudaMallocHost(&p_, bytes));
  }
  ~PinnedMemory() {
    if (p_) SWEEP_LOG_ON_ERROR(cudaFreeHost(p_) == cudaSuccess, "cudaFreeHost");
  }
  PinnedMemory(PinnedMemory&& o) noexcept
      : p_(std::exchange(o.p_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
  PinnedMemory& operator=(PinnedMemory&& o) noexcept {
    if (this != &o) {
      if (p_) SWEEP_LOG_ON_ERROR(cudaFreeHost(p_) == cudaSuccess, "cudaFreeHost");
      p_ = std::exchange(o.p_, nullptr);
      bytes_ = std::exchange(o.bytes_, 0);
    }
    return *this;
  }
  PinnedMemory(const PinnedMemory&) = delete;
  PinnedMemory& operator=(const PinnedMemory&) = delete;
  template <class T>
  T* as() const {
    return static_cast<T*>(p_);
  }

 private:
  void* p_ = nullptr;
  std::size_t bytes_ = 0;
};

}  // namespace sweep::trainer::cuda
