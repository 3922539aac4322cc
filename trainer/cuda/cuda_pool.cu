/*
 * cuda_pool.cu — the CUDA backend's pooling: cuDNN's pooling plans, our 2x2 max pooling
 * (maxpool2x2.cuh, with the argmax bytes its backward reads) and a convolution that pools its own
 * outputs (tiled_conv.h).
 */
#include <array>
#include <memory>

#include "common/check.h"
#include "trainer/cuda/cuda_backend.h"
#include "trainer/cuda/maxpool2x2.cuh"
#include "trainer/cuda/tiled_conv.h"

namespace sweep::trainer::cuda {

const PoolPlan& CudaBackend::pool_plan(const PoolGeom& g, PoolMode mode) {
  const std::array<int, 13> key{g.n,
                                g.c,
                                g.h,
                                g.w,
                                g.kh,
                                g.kw,
                                g.stride_h,
                                g.stride_w,
                                g.pad_h,
                                g.pad_w,
                                g.out_h,
                                g.out_w,
                                static_cast<int>(mode)};
  auto it = pool_plans_.find(key);
  if (it == pool_plans_.end()) {
    require_not_capturing("building a pooling plan");
    it = pool_plans_.emplace(key, std::make_unique<PoolPlan>(g, mode)).first;
  }
  return *it->second;
}

void CudaBackend::pool_forward(const PoolGeom& g, PoolMode mode, const float* x, float* y) {
  enter();
  if (mode == PoolMode::max && is_2x2_stride2(g))
    return maxpool2x2_forward(x, y, nullptr, std::size_t(g.n) * g.c, g.h, g.w, g.out_h, g.out_w,
                              shares_device(), stream());
  pool_plan(g, mode).forward(dnn(), x, y);
}

void CudaBackend::pool_backward(const PoolGeom& g, PoolMode mode, const float* x, const float* y,
                                const float* dy, float* dx) {
  const std::size_t nx = std::size_t(g.n) * g.c * g.h * g.w,
                    ny = std::size_t(g.n) * g.c * g.out_h * g.out_w;
  enter_backward({floats(x, nx), floats(y, ny), floats(dy, ny)}, {floats(dx, nx)});
  if (mode == PoolMode::max && is_2x2_stride2(g))
    return maxpool2x2_backward(x, y, dy, dx, std::size_t(g.n) * g.c, g.h, g.w, g.out_h, g.out_w,
                               shares_device(), stream());
  pool_plan(g, mode).backward(dnn(), x, y, dy, dx);
}

void CudaBackend::maxpool2x2_forward_argmax(const PoolGeom& g, const float* x, float* y,
                                            std::uint8_t* argmax) {
  if (!is_2x2_stride2(g)) throw Error("internal: maxpool2x2_forward_argmax on another pooling");
  enter();
  maxpool2x2_forward(x, y, argmax, std::size_t(g.n) * g.c, g.h, g.w, g.out_h, g.out_w,
                     shares_device(), stream());
}

// Our tiled forward pools its outputs in shared memory where it runs the shape and the pooled
// blocks fit (tiled_conv_pool_fits); otherwise the convolution and then the pooling.
void CudaBackend::conv2d_forward_maxpool2x2(const ConvGeom& g, const float* x, const float* w,
                                            const float* b, float* y, float* pooled,
                                            std::uint8_t* argmax) {
  enter();
  const ConvEntry& e = conv_entry(g);
  if (!e.nhwc && e.forward == ConvImpl::tiled && tiled_conv_pool_fits(g, e.forward_sms))
    return tiled_conv_forward_maxpool2x2(g, x, w, b, pooled, argmax, e.forward_sms, stream());
  conv2d_forward(g, x, w, b, y);
  maxpool2x2_forward_argmax(maxpool2x2_of(g), y, pooled, argmax);
}

void CudaBackend::maxpool2x2_backward_argmax(const PoolGeom& g, const std::uint8_t* argmax,
                                             const float* dy, float* dx) {
  if (!is_2x2_stride2(g)) throw Error("internal: maxpool2x2_backward_argmax on another pooling");
  const std::size_t nx = std::size_t(g.n) * g.c * g.h * g.w,
                    ny = std::size_t(g.n) * g.c * g.out_h * g.out_w;
  enter_backward({MemoryRange{argmax, ny}, floats(dy, ny)}, {floats(dx, nx)});
  cuda::maxpool2x2_backward_argmax(argmax, dy, dx, std::size_t(g.n) * g.c, g.h, g.w, g.out_h,
                                   g.out_w, shares_device(), stream());
}

}  // namespace sweep::trainer::cuda
