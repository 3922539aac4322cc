/*
 * nhwc_batchnorm.cu — batch norm on NHWC activations (nhwc_activations.h): training forward
 * (statistics in one pass of shifted sums, then the normalisation), inference from the running
 * statistics, and the gradient, each with the ReLU after it optionally folded in; a template on
 * the element type T (__nv_bfloat16 or float). The sums' split and order are nhwc_reduce.cuh's.
 */
#include <cstddef>

#include "common/check.h"
#include "trainer/cuda/launch.cuh"
#include "trainer/cuda/nhwc_activations.h"
#include "trainer/cuda/nhwc_pack.cuh"
#include "trainer/cuda/nhwc_reduce.cuh"

namespace sweep::trainer::cuda {

namespace {

using namespace nhwc;

template <class T>
BnShape checked_bn_shape(const BatchNormGeom& g) {
  checked_size(name_for<T>("batchnorm (bf16 NHWC)", "batchnorm (fp32 NHWC)"),
               std::size_t(g.n) * std::size_t(g.hw) * std::size_t(g.c));
  return bn_shape(g);
}

// The scratch: partials (chunks x c pairs of doubles, chunk-major: a block writes, and the
// combine reads, consecutive channels), then up to four arrays of c per-channel floats (the
// normalisation's scale and shift, or the gradient's coefficients).
struct BnScratch {
  double2* partials;
  float* coef;
};

BnScratch scratch_of(const BnShape& s, float* scratch) {
  auto* partials = reinterpret_cast<double2*>(scratch);
  return {partials, reinterpret_cast<float*>(partials + std::size_t(s.chunks) * s.c)};
}

// y = x * scale + shift over the thread's rows (relu: then max(0, y), a NaN staying NaN), as
// normalize_kernel. y may be x.
template <int P, bool kVec, class T>
__device__ void affine(const T* x, const BnShape& s, const Walk& w, const float (&scale)[P],
                       const float (&shift)[P], bool relu, T* y) {
  for (unsigned r = w.first; r < w.end; r += kBatch * s.ty) {
    float v[kBatch][P];
    load_rows<P, kVec>(x, s, w, r, v);
#pragma unroll
    for (int u = 0; u < kBatch; ++u) {
      const unsigned ru = r + u * s.ty;
      if (ru >= w.end) break;
#pragma unroll
      for (int j = 0; j < P; ++j) {
        const float o = v[u][j] * scale[j] + shift[j];
        v[u][j] = relu && o <= 0.f ? 0.f : o;
      }
      store_n<P, kVec>(y + ru * s.c + w.c0, v[u]);
    }
  }
}

// Training forward, pass 1: per chunk, the sums of d = x - x0 and of d * d, x0 the channel's value
// in the first row. One read of x gives both (the mean and the squared deviations took a read
// each); the shift keeps the difference var = E[d^2] - E[d]^2 well conditioned: E[d]^2 / var is
// a sample's squared z-score, not mean^2 / var (a channel of mean 1000 and deviation 1 would lose
// every digit without it).
template <class T, int P, bool kVec>
__global__ void __launch_bounds__(kThreads, kBnBlocksPerSm)
    bn_moments_kernel(const T* __restrict__ x, BnShape s, double2* __restrict__ partials) {
  const Walk w = walk_of<P>(s);
  float sum[P] = {}, sq[P] = {}, x0[P];
  if (w.active) {
#pragma unroll
    for (int j = 0; j < P; ++j) x0[j] = widen(x[w.c0 + j]);
    for_each_value<P, kVec>(x, s, w, [&](int j, float v) {
      const float d = v - x0[j];
      sum[j] += d;
      sq[j] = fmaf(d, d, sq[j]);
    });
  }
  write_partials<P>(sum, sq, s, partials);
}

// Its combine: the statistics, the running averages and the normalisation's scale and shift, by
// normalize_kernel's formulas.
template <class T>
__global__ void __launch_bounds__(kCombineChannels* kCombineLanes)
    bn_stats_kernel(BnShape s, const T* __restrict__ x, const double2* __restrict__ partials,
                    const float* __restrict__ gamma, const float* __restrict__ beta,
                    float* __restrict__ running_mean, float* __restrict__ running_var,
                    float* __restrict__ save_mean, float* __restrict__ save_invstd, float eps,
                    float momentum, float* __restrict__ scale, float* __restrict__ shift) {
  const unsigned ch = blockIdx.x * kCombineChannels + threadIdx.x;
  const double2 t = combine(partials, s, ch);
  if (threadIdx.y != 0 || ch >= s.c) return;
  const double count = double(s.rows), d_mean = t.x / count, mean = double(widen(x[ch])) + d_mean;
  const double sumsq = fmax(0.0, t.y - t.x * d_mean);
  const double var = sumsq / count, invstd = 1.0 / sqrt(var + double(eps));
  const double unbiased = count > 1 ? sumsq / (count - 1) : var;
  save_mean[ch] = float(mean);
  save_invstd[ch] = float(invstd);
  running_mean[ch] = float((1.0 - momentum) * running_mean[ch] + momentum * mean);
  running_var[ch] = float((1.0 - momentum) * running_var[ch] + momentum * unbiased);
  scale[ch] = float(gamma[ch] * invstd);
  shift[ch] = float(beta[ch] - mean * gamma[ch] * invstd);
}

// Pass 2: y.
template <class T, int P, bool kVec>
__global__ void __launch_bounds__(kThreads, kBnBlocksPerSm)
    bn_normalize_kernel(const T* x, BnShape s, const float* __restrict__ scale,
                        const float* __restrict__ shift, bool relu, T* y) {
  const Walk w = walk_of<P>(s);
  if (!w.active) return;
  float a[P], b[P];
#pragma unroll
  for (int j = 0; j < P; ++j) {
    a[j] = scale[w.c0 + j];
    b[j] = shift[w.c0 + j];
  }
  affine<P, kVec>(x, s, w, a, b, relu, y);
}

// Inference: y from the running statistics, by infer_kernel's formulas.
template <class T, int P, bool kVec>
__global__ void __launch_bounds__(kThreads, kBnBlocksPerSm)
    bn_infer_kernel(const T* x, BnShape s, const float* __restrict__ gamma,
                    const float* __restrict__ beta, const float* __restrict__ running_mean,
                    const float* __restrict__ running_var, float eps, bool relu, T* y) {
  const Walk w = walk_of<P>(s);
  if (!w.active) return;
  float scale[P], shift[P];
#pragma unroll
  for (int j = 0; j < P; ++j) {
    const unsigned c = w.c0 + j;
    const double invstd = 1.0 / sqrt(double(running_var[c]) + double(eps));
    scale[j] = float(gamma[c] * invstd);
    shift[j] = float(beta[c] - running_mean[c] * gamma[c] * invstd);
  }
  affine<P, kVec>(x, s, w, scale, shift, relu, y);
}

// The gradient reaching the batch norm's output through its ReLU: relu_backward's mask, 0 where
// the ReLU's output (relu_y) is not positive.
template <int P, int B>
__device__ __forceinline__ void mask_relu(const float (&relu_y)[B][P], float (&d)[B][P]) {
#pragma unroll
  for (int u = 0; u < B; ++u)
#pragma unroll
    for (int j = 0; j < P; ++j)
      if (!(relu_y[u][j] > 0.f)) d[u][j] = 0.f;
}

// A batch of rows' x and dy from row r, dy passed back through the ReLU when relu_y is given.
template <int P, bool kVec, class T>
__device__ __forceinline__ void load_grad_rows(const T* x, const T* relu_y, const T* dy,
                                               const BnShape& s, const Walk& w, unsigned r,
                                               float (&vx)[kGradBatch][P],
                                               float (&vd)[kGradBatch][P]) {
  load_rows<P, kVec>(x, s, w, r, vx);
  load_rows<P, kVec>(dy, s, w, r, vd);
  if (relu_y) {
    float vr[kGradBatch][P];
    load_rows<P, kVec>(relu_y, s, w, r, vr);
    mask_relu(vr, vd);
  }
}

// Backward, pass 1: per chunk, the sums of dy and of dy * (x - mean).
template <class T, int P, bool kVec>
__global__ void __launch_bounds__(kThreads, kBnBlocksPerSm)
    bn_grad_sum_kernel(const T* __restrict__ x, const T* __restrict__ relu_y,
                       const T* __restrict__ dy, BnShape s, const float* __restrict__ save_mean,
                       double2* __restrict__ partials) {
  const Walk w = walk_of<P>(s);
  float sum_dy[P] = {}, sum_dy_xc[P] = {}, m[P];
  if (w.active) {
#pragma unroll
    for (int j = 0; j < P; ++j) m[j] = save_mean[w.c0 + j];
    for (unsigned r = w.first; r < w.end; r += kGradBatch * s.ty) {
      float vx[kGradBatch][P], vd[kGradBatch][P];
      load_grad_rows<P, kVec>(x, relu_y, dy, s, w, r, vx, vd);
#pragma unroll
      for (int u = 0; u < kGradBatch; ++u)
        if (r + u * s.ty < w.end) {
#pragma unroll
          for (int j = 0; j < P; ++j) {
            sum_dy[j] += vd[u][j];
            sum_dy_xc[j] = fmaf(vd[u][j], vx[u][j] - m[j], sum_dy_xc[j]);
          }
        }
    }
  }
  write_partials<P>(sum_dy, sum_dy_xc, s, partials);
}

// Its combine: dgamma, dbeta and dx's coefficients, by grad_apply_kernel's formulas:
// dx = gamma * invstd * (dy - mean(dy) - xhat * mean(dy * xhat)) = a * dy + b + cx * (x - mean).
__global__ void __launch_bounds__(kCombineChannels* kCombineLanes)
    bn_grad_coef_kernel(BnShape s, const double2* __restrict__ partials,
                        const float* __restrict__ gamma, const float* __restrict__ save_invstd,
                        float* __restrict__ dgamma, float* __restrict__ dbeta,
                        float* __restrict__ coef_a, float* __restrict__ coef_b,
                        float* __restrict__ coef_cx) {
  const unsigned ch = blockIdx.x * kCombineChannels + threadIdx.x;
  const double2 t = combine(partials, s, ch);
  if (threadIdx.y != 0 || ch >= s.c) return;
  const double invstd = save_invstd[ch], count = double(s.rows);
  const double sum_dy = t.x, sum_dy_xhat = t.y * invstd;
  dgamma[ch] = float(sum_dy_xhat);
  dbeta[ch] = float(sum_dy);
  const double k = gamma[ch] * invstd;
  coef_a[ch] = float(k);
  coef_b[ch] = float(-k * (sum_dy / count));
  coef_cx[ch] = float(-k * (sum_dy_xhat / count) * invstd);
}

// Pass 2: dx. dx may be dy: a thread reads a batch's dy before writing its dx, and no other
// thread reads those elements.
template <class T, int P, bool kVec>
__global__ void __launch_bounds__(kThreads, kBnBlocksPerSm)
    bn_grad_apply_kernel(const T* __restrict__ x, const T* __restrict__ relu_y, const T* dy,
                         BnShape s, const float* __restrict__ save_mean,
                         const float* __restrict__ coef_a, const float* __restrict__ coef_b,
                         const float* __restrict__ coef_cx, T* dx) {
  const Walk w = walk_of<P>(s);
  if (!w.active) return;
  float a[P], b[P], cx[P], m[P];
#pragma unroll
  for (int j = 0; j < P; ++j) {
    a[j] = coef_a[w.c0 + j];
    b[j] = coef_b[w.c0 + j];
    cx[j] = coef_cx[w.c0 + j];
    m[j] = save_mean[w.c0 + j];
  }
  for (unsigned r = w.first; r < w.end; r += kGradBatch * s.ty) {
    float vx[kGradBatch][P], vd[kGradBatch][P];
    load_grad_rows<P, kVec>(x, relu_y, dy, s, w, r, vx, vd);
#pragma unroll
    for (int u = 0; u < kGradBatch; ++u) {
      const unsigned ru = r + u * s.ty;
      if (ru >= w.end) break;
#pragma unroll
      for (int j = 0; j < P; ++j) vd[u][j] = a[j] * vd[u][j] + b[j] + cx[j] * (vx[u][j] - m[j]);
      store_n<P, kVec>(dx + ru * s.c + w.c0, vd[u]);
    }
  }
}

// ---------------------------------------------------------------------------- launchers

// The launchers for either T; the public overloads below forward to them.
namespace generic {

template <class T>
void batchnorm_train(const BatchNormGeom& g, const T* x, const float* gamma, const float* beta,
                     float* running_mean, float* running_var, float* save_mean, float* save_invstd,
                     T* y, bool relu, float* scratch, cudaStream_t stream) {
  const BnShape s = checked_bn_shape<T>(g);
  const BnScratch t = scratch_of(s, scratch);
  float *scale = t.coef, *shift = t.coef + s.c;
  by_variant(s, pair_aligned<T>(x, y), [&](auto p, auto vec) {
    constexpr int P = decltype(p)::value;
    constexpr bool kVec = decltype(vec)::value;
    bn_moments_kernel<T, P, kVec><<<grid_of(s), block_of(s), 0, stream>>>(x, s, t.partials);
    SWEEP_CHECK_CUDA(cudaGetLastError());
    bn_stats_kernel<T><<<combine_grid(s), combine_block(), 0, stream>>>(
        s, x, t.partials, gamma, beta, running_mean, running_var, save_mean, save_invstd, g.eps,
        g.momentum, scale, shift);
    SWEEP_CHECK_CUDA(cudaGetLastError());
    bn_normalize_kernel<T, P, kVec>
        <<<grid_of(s), block_of(s), 0, stream>>>(x, s, scale, shift, relu, y);
    SWEEP_CHECK_CUDA(cudaGetLastError());
  });
}

template <class T>
void batchnorm_infer(const BatchNormGeom& g, const T* x, const float* gamma, const float* beta,
                     const float* running_mean, const float* running_var, T* y, bool relu,
                     cudaStream_t stream) {
  const BnShape s = checked_bn_shape<T>(g);
  by_variant(s, pair_aligned<T>(x, y), [&](auto p, auto vec) {
    constexpr int P = decltype(p)::value;
    constexpr bool kVec = decltype(vec)::value;
    bn_infer_kernel<T, P, kVec><<<grid_of(s), block_of(s), 0, stream>>>(
        x, s, gamma, beta, running_mean, running_var, g.eps, relu, y);
    SWEEP_CHECK_CUDA(cudaGetLastError());
  });
}

template <class T>
void batchnorm_grad(const BatchNormGeom& g, const T* x, const T* relu_y, const T* dy,
                    const float* gamma, const float* save_mean, const float* save_invstd, T* dx,
                    float* dgamma, float* dbeta, float* scratch, cudaStream_t stream) {
  const BnShape s = checked_bn_shape<T>(g);
  const BnScratch t = scratch_of(s, scratch);
  float *coef_a = t.coef, *coef_b = t.coef + s.c, *coef_cx = t.coef + 2 * s.c;
  by_variant(s, pair_aligned<T>(x, relu_y, dy, dx), [&](auto p, auto vec) {
    constexpr int P = decltype(p)::value;
    constexpr bool kVec = decltype(vec)::value;
    bn_grad_sum_kernel<T, P, kVec>
        <<<grid_of(s), block_of(s), 0, stream>>>(x, relu_y, dy, s, save_mean, t.partials);
    SWEEP_CHECK_CUDA(cudaGetLastError());
    bn_grad_coef_kernel<<<combine_grid(s), combine_block(), 0, stream>>>(
        s, t.partials, gamma, save_invstd, dgamma, dbeta, coef_a, coef_b, coef_cx);
    SWEEP_CHECK_CUDA(cudaGetLastError());
    bn_grad_apply_kernel<T, P, kVec><<<grid_of(s), block_of(s), 0, stream>>>(
        x, relu_y, dy, s, save_mean, coef_a, coef_b, coef_cx, dx);
    SWEEP_CHECK_CUDA(cudaGetLastError());
  });
}

}  // namespace generic

}  // namespace

std::size_t batchnorm_nhwc_scratch_floats(const BatchNormGeom& g) {
  const BnShape s = bn_shape(g);
  const std::size_t doubles = 2 * std::size_t(s.chunks) * s.c;  // partials
  return 2 * doubles + 4 * std::size_t(s.c);
}

void batchnorm_train_nhwc(const BatchNormGeom& g, const __nv_bfloat16* x, const float* gamma,
                          const float* beta, float* running_mean, float* running_var,
                          float* save_mean, float* save_invstd, __nv_bfloat16* y, bool relu,
                          float* scratch, cudaStream_t stream) {
  generic::batchnorm_train(g, x, gamma, beta, running_mean, running_var, save_mean, save_invstd, y,
                           relu, scratch, stream);
}

void batchnorm_train_nhwc(const BatchNormGeom& g, const float* x, const float* gamma,
                          const float* beta, float* running_mean, float* running_var,
                          float* save_mean, float* save_invstd, float* y, bool relu, float* scratch,
                          cudaStream_t stream) {
  generic::batchnorm_train(g, x, gamma, beta, running_mean, running_var, save_mean, save_invstd, y,
                           relu, scratch, stream);
}

void batchnorm_infer_nhwc(const BatchNormGeom& g, const __nv_bfloat16* x, const float* gamma,
                          const float* beta, const float* running_mean, const float* running_var,
                          __nv_bfloat16* y, bool relu, cudaStream_t stream) {
  generic::batchnorm_infer(g, x, gamma, beta, running_mean, running_var, y, relu, stream);
}

void batchnorm_infer_nhwc(const BatchNormGeom& g, const float* x, const float* gamma,
                          const float* beta, const float* running_mean, const float* running_var,
                          float* y, bool relu, cudaStream_t stream) {
  generic::batchnorm_infer(g, x, gamma, beta, running_mean, running_var, y, relu, stream);
}

void batchnorm_grad_nhwc(const BatchNormGeom& g, const __nv_bfloat16* x,
                         const __nv_bfloat16* relu_y, const __nv_bfloat16* dy, const float* gamma,
                         const float* save_mean, const float* save_invstd, __nv_bfloat16* dx,
                         float* dgamma, float* dbeta, float* scratch, cudaStream_t stream) {
  generic::batchnorm_grad(g, x, relu_y, dy, gamma, save_mean, save_invstd, dx, dgamma, dbeta,
                          scratch, stream);
}

void batchnorm_grad_nhwc(const BatchNormGeom& g, const float* x, const float* relu_y,
                         const float* dy, const float* gamma, const float* save_mean,
                         const float* save_invstd, float* dx, float* dgamma, float* dbeta,
                         float* scratch, cudaStream_t stream) {
  generic::batchnorm_grad(g, x, relu_y, dy, gamma, save_mean, save_invstd, dx, dgamma, dbeta,
                          scratch, stream);
}

}  // namespace sweep::trainer::cuda
