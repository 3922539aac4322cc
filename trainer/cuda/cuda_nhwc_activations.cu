/*
 * cuda_nhwc_activations.cu — the backend's ops on activations kept channels-last, bf16 or fp32
 * NHWC (trainer/backend/channels_last_ops.h): conversions through nhwc_cast.cu's kernels,
 * the rest through nhwc_activations.h's. Each op waits for the side stream as its fp32 NCHW twin
 * does (a backward op only when it touches what the queued weight gradients still read or write).
 */
#include "common/check.h"
#include "trainer/cuda/cuda_backend.h"
#include "trainer/cuda/nhwc_activations.h"
#include "trainer/cuda/nhwc_cast.cuh"

namespace sweep::trainer::cuda {

namespace {

template <class T>
const T* typed(const void* p) {
  return static_cast<const T*>(p);
}
template <class T>
T* typed(void* p) {
  return static_cast<T*>(p);
}

void require_nhwc(Storage s) {
  if (!is_nhwc(s)) throw Error("cuda: a channels-last op given fp32 NCHW tensors");
}

}  // namespace

void CudaBackend::to_storage(Storage s, const float* x, void* y, int n, int c, int hw) {
  if (!is_nhwc(s)) return copy(y, x, std::size_t(n) * c * hw * sizeof(float));
  enter();
  with_nhwc_type(s, [&](auto tag) {
    using T = decltype(tag);
    to_nhwc<T>({{x, typed<T>(y), n, c, hw}}, stream());
  });
}

void CudaBackend::from_storage(Storage s, const void* x, float* y, int n, int c, int hw) {
  if (!is_nhwc(s)) return copy(y, x, std::size_t(n) * c * hw * sizeof(float));
  enter();
  with_nhwc_type(s, [&](auto tag) {
    using T = decltype(tag);
    to_nchw<T>({{typed<T>(x), y, n, c, hw}}, stream());
  });
}

void CudaBackend::batchnorm_forward_train_nhwc(const BatchNormGeom& g, Storage s, const void* x,
                                               const float* gamma, const float* beta,
                                               float* running_mean, float* running_var,
                                               float* save_mean, float* save_invstd, void* y,
                                               bool relu) {
  require_nhwc(s);
  enter();
  float* scratch = scratch_floats(batchnorm_nhwc_scratch_floats(g));
  with_nhwc_type(s, [&](auto tag) {
    using T = decltype(tag);
    batchnorm_train_nhwc(g, typed<T>(x), gamma, beta, running_mean, running_var, save_mean,
                         save_invstd, typed<T>(y), relu, scratch, stream());
  });
}

void CudaBackend::batchnorm_forward_infer_nhwc(const BatchNormGeom& g, Storage s, const void* x,
                                               const float* gamma, const float* beta,
                                               const float* running_mean, const float* running_var,
                                               void* y, bool relu) {
  require_nhwc(s);
  enter();
  with_nhwc_type(s, [&](auto tag) {
    using T = decltype(tag);
    batchnorm_infer_nhwc(g, typed<T>(x), gamma, beta, running_mean, running_var, typed<T>(y), relu,
                         stream());
  });
}

void CudaBackend::batchnorm_backward_nhwc(const BatchNormGeom& g, Storage s, const void* x,
                                          const void* relu_y, const void* dy, const float* gamma,
                                          const float* save_mean, const float* save_invstd,
                                          void* dx, float* dgamma, float* dbeta) {
  require_nhwc(s);
  const std::size_t nx = std::size_t(g.n) * g.c * g.hw, c = std::size_t(g.c);
  enter_backward({stored(x, nx, s), stored(relu_y, nx, s), stored(dy, nx, s), floats(gamma, c),
                  floats(save_mean, c), floats(save_invstd, c)},
                 {stored(dx, nx, s), floats(dgamma, c), floats(dbeta, c)});
  float* scratch = scratch_floats(batchnorm_nhwc_scratch_floats(g));
  with_nhwc_type(s, [&](auto tag) {
    using T = decltype(tag);
    batchnorm_grad_nhwc(g, typed<T>(x), typed<T>(relu_y), typed<T>(dy), gamma, save_mean,
                        save_invstd, typed<T>(dx), dgamma, dbeta, scratch, stream());
  });
}

void CudaBackend::relu_forward_nhwc(Storage s, const void* x, void* y, std::size_t n) {
  require_nhwc(s);
  enter();
  with_nhwc_type(s, [&](auto tag) {
    using T = decltype(tag);
    cuda::relu_forward_nhwc(typed<T>(x), typed<T>(y), n, stream());
  });
}

void CudaBackend::relu_backward_nhwc(Storage s, const void* y, const void* dy, void* dx,
                                     std::size_t n) {
  require_nhwc(s);
  enter_backward({stored(y, n, s), stored(dy, n, s)}, {stored(dx, n, s)});
  with_nhwc_type(s, [&](auto tag) {
    using T = decltype(tag);
    cuda::relu_backward_nhwc(typed<T>(y), typed<T>(dy), typed<T>(dx), n, stream());
  });
}

void CudaBackend::add_nhwc(Storage s, const void* a, const void* b, void* y, std::size_t n,
                           bool relu) {
  require_nhwc(s);
  enter_backward({stored(a, n, s), stored(b, n, s)}, {stored(y, n, s)});
  with_nhwc_type(s, [&](auto tag) {
    using T = decltype(tag);
    cuda::add_nhwc(typed<T>(a), typed<T>(b), typed<T>(y), n, relu, stream());
  });
}

void CudaBackend::maxpool2x2_forward_nhwc(const PoolGeom& g, Storage s, const void* x, void* y) {
  require_nhwc(s);
  if (!is_2x2_stride2(g))
    throw Error("cuda: channels-last max pooling takes 2x2 windows of stride 2 only");
  enter();
  with_nhwc_type(s, [&](auto tag) {
    using T = decltype(tag);
    cuda::maxpool2x2_forward_nhwc(g.n, g.c, g.h, g.w, typed<T>(x), typed<T>(y), stream());
  });
}

void CudaBackend::maxpool2x2_backward_nhwc(const PoolGeom& g, Storage s, const void* x,
                                           const void* y, const void* dy, void* dx) {
  require_nhwc(s);
  if (!is_2x2_stride2(g))
    throw Error("cuda: channels-last max pooling takes 2x2 windows of stride 2 only");
  const std::size_t nx = std::size_t(g.n) * g.c * g.h * g.w,
                    ny = std::size_t(g.n) * g.c * g.out_h * g.out_w;
  enter_backward({stored(x, nx, s), stored(y, ny, s), stored(dy, ny, s)}, {stored(dx, nx, s)});
  with_nhwc_type(s, [&](auto tag) {
    using T = decltype(tag);
    cuda::maxpool2x2_backward_nhwc(g.n, g.c, g.h, g.w, typed<T>(x), typed<T>(y), typed<T>(dy),
                                   typed<T>(dx), stream());
  });
}

void CudaBackend::global_avgpool_forward_nhwc(const PoolGeom& g, Storage s, const void* x,
                                              float* y) {
  require_nhwc(s);
  enter();
  with_nhwc_type(s, [&](auto tag) {
    using T = decltype(tag);
    cuda::global_avgpool_forward_nhwc(g.n, g.c, g.h * g.w, typed<T>(x), y, stream());
  });
}

void CudaBackend::global_avgpool_backward_nhwc(const PoolGeom& g, Storage s, const float* dy,
                                               void* dx) {
  require_nhwc(s);
  const std::size_t nx = std::size_t(g.n) * g.c * g.h * g.w;
  enter_backward({floats(dy, std::size_t(g.n) * g.c)}, {stored(dx, nx, s)});
  with_nhwc_type(s, [&](auto tag) {
    using T = decltype(tag);
    cuda::global_avgpool_backward_nhwc(g.n, g.c, g.h * g.w, dy, typed<T>(dx), stream());
  });
}

}  // namespace sweep::trainer::cuda
