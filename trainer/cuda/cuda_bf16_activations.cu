/*
 * cuda_bf16_activations.cu — the backend's ops on activations kept in bf16 NHWC (backend.h,
 * "activations kept in bf16"): conversions through bf16_cast.cu's kernels, the rest through
 * bf16_activations.cu's. Each op waits for the side stream as its fp32 twin does (a backward op
 * only when it touches what the queued weight gradients still read or write).
 */
#include "trainer/cuda/bf16.cuh"
#include "trainer/cuda/bf16_activations.h"
#include "trainer/cuda/cuda_backend.h"

namespace sweep::trainer::cuda {

namespace {

const __nv_bfloat16* dev(const Bf16* p) { return reinterpret_cast<const __nv_bfloat16*>(p); }
__nv_bfloat16* dev(Bf16* p) { return reinterpret_cast<__nv_bfloat16*>(p); }
// n bf16 values at p, for the side stream's bookkeeping (pending_ranges.h).
MemoryRange halves(const void* p, std::size_t n) { return stored(p, n, Storage::bf16_nhwc); }

}  // namespace

void CudaBackend::to_bf16_nhwc(const float* x, Bf16* y, int n, int c, int hw) {
  enter();
  narrow({{x, dev(y), n, c, hw}}, stream());
}

void CudaBackend::from_bf16_nhwc(const Bf16* x, float* y, int n, int c, int hw) {
  enter();
  widen({{dev(x), y, n, c, hw}}, stream());
}

void CudaBackend::batchnorm_forward_train_bf16(const BatchNormGeom& g, const Bf16* x,
                                               const float* gamma, const float* beta,
                                               float* running_mean, float* running_var,
                                               float* save_mean, float* save_invstd, Bf16* y,
                                               bool relu) {
  enter();
  batchnorm_train_nhwc(g, dev(x), gamma, beta, running_mean, running_var, save_mean, save_invstd,
                       dev(y), relu, scratch_floats(batchnorm_nhwc_scratch_floats(g)), stream());
}

void CudaBackend::batchnorm_forward_infer_bf16(const BatchNormGeom& g, const Bf16* x,
                                               const float* gamma, const float* beta,
                                               const float* running_mean, const float* running_var,
                                               Bf16* y, bool relu) {
  enter();
  batchnorm_infer_nhwc(g, dev(x), gamma, beta, running_mean, running_var, dev(y), relu, stream());
}

void CudaBackend::batchnorm_backward_bf16(const BatchNormGeom& g, const Bf16* x, const Bf16* relu_y,
                                          const Bf16* dy, const float* gamma,
                                          const float* save_mean, const float* save_invstd,
                                          Bf16* dx, float* dgamma, float* dbeta) {
  const std::size_t nx = std::size_t(g.n) * g.c * g.hw, c = std::size_t(g.c);
  enter_backward({halves(x, nx), halves(relu_y, nx), halves(dy, nx), floats(gamma, c),
                  floats(save_mean, c), floats(save_invstd, c)},
                 {halves(dx, nx), floats(dgamma, c), floats(dbeta, c)});
  batchnorm_grad_nhwc(g, dev(x), dev(relu_y), dev(dy), gamma, save_mean, save_invstd, dev(dx),
                      dgamma, dbeta, scratch_floats(batchnorm_nhwc_scratch_floats(g)), stream());
}

void CudaBackend::relu_forward_bf16(const Bf16* x, Bf16* y, std::size_t n) {
  enter();
  cuda::relu_forward_bf16(dev(x), dev(y), n, stream());
}

void CudaBackend::relu_backward_bf16(const Bf16* y, const Bf16* dy, Bf16* dx, std::size_t n) {
  enter_backward({halves(y, n), halves(dy, n)}, {halves(dx, n)});
  cuda::relu_backward_bf16(dev(y), dev(dy), dev(dx), n, stream());
}

void CudaBackend::add_bf16(const Bf16* a, const Bf16* b, Bf16* y, std::size_t n, bool relu) {
  enter_backward({halves(a, n), halves(b, n)}, {halves(y, n)});
  cuda::add_bf16(dev(a), dev(b), dev(y), n, relu, stream());
}

void CudaBackend::maxpool2x2_forward_bf16(const PoolGeom& g, const Bf16* x, Bf16* y) {
  if (!is_2x2_stride2(g)) throw Error("cuda: bf16 max pooling takes 2x2 windows of stride 2 only");
  enter();
  maxpool2x2_forward_nhwc(g.n, g.c, g.h, g.w, dev(x), dev(y), stream());
}

void CudaBackend::maxpool2x2_backward_bf16(const PoolGeom& g, const Bf16* x, const Bf16* y,
                                           const Bf16* dy, Bf16* dx) {
  if (!is_2x2_stride2(g)) throw Error("cuda: bf16 max pooling takes 2x2 windows of stride 2 only");
  const std::size_t nx = std::size_t(g.n) * g.c * g.h * g.w,
                    ny = std::size_t(g.n) * g.c * g.out_h * g.out_w;
  enter_backward({halves(x, nx), halves(y, ny), halves(dy, ny)}, {halves(dx, nx)});
  maxpool2x2_backward_nhwc(g.n, g.c, g.h, g.w, dev(x), dev(y), dev(dy), dev(dx), stream());
}

void CudaBackend::global_avgpool_forward_bf16(const PoolGeom& g, const Bf16* x, float* y) {
  enter();
  global_avgpool_forward_nhwc(g.n, g.c, g.h * g.w, dev(x), y, stream());
}

void CudaBackend::global_avgpool_backward_bf16(const PoolGeom& g, const float* dy, Bf16* dx) {
  const std::size_t nx = std::size_t(g.n) * g.c * g.h * g.w;
  enter_backward({floats(dy, std::size_t(g.n) * g.c)}, {halves(dx, nx)});
  global_avgpool_backward_nhwc(g.n, g.c, g.h * g.w, dy, dev(dx), stream());
}

}  // namespace sweep::trainer::cuda
