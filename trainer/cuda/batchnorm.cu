/*
 * batchnorm.cu — the kernels of batchnorm.h.
 */
#include <algorithm>
#include <cmath>
#include <string>

#include "common/check.h"
#include "trainer/cuda/batchnorm.h"

namespace sweep::trainer::cuda {

namespace {

constexpr int kThreads = 256;
constexpr int kTargetBlocks = 528;       // about four per SM of an H100, whatever the channels
constexpr unsigned kMinPerBlock = 2048;  // values a block walks at least (when there are enough)

// How a channel's N*H*W values split into chunks, one block each. Depends on the shape only, so
// the sums' order (and the result's bits) is the same on every GPU.
struct Split {
  unsigned count;   // N*H*W
  unsigned chunks;  // blocks per channel
  unsigned per;     // values per chunk
};

Split split_of(const BatchNormGeom& g) {
  const unsigned count = unsigned(g.n) * unsigned(g.hw);
  const unsigned by_blocks = (kTargetBlocks + unsigned(g.c) - 1) / unsigned(g.c);
  const unsigned chunks = std::max(1u, std::min(by_blocks, count / kMinPerBlock));
  return {count, chunks, (count + chunks - 1) / chunks};
}

struct Shape {
  unsigned c, hw;
  Split s;
};

// The value of channel c at position e of its N*H*W, as an index into the NCHW tensor.
__device__ unsigned at(const Shape& sh, unsigned c, unsigned e) {
  const unsigned ni = e / sh.hw;
  return (ni * sh.c + c) * sh.hw + (e - ni * sh.hw);
}

// The block's sums of a and b (each thread's own), in double, to every thread.
__device__ double2 block_sum(float a, float b) {
  __shared__ double2 warp_sums[kThreads / 32];
  double2 v{a, b};
  for (int off = 16; off > 0; off /= 2) {
    v.x += __shfl_down_sync(0xffffffffu, v.x, off);
    v.y += __shfl_down_sync(0xffffffffu, v.y, off);
  }
  __syncthreads();  // a previous call's readers are done
  if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = v;
  __syncthreads();
  double2 total{0, 0};
  for (int w = 0; w < kThreads / 32; ++w) {  // in order: the same bits every run
    total.x += warp_sums[w].x;
    total.y += warp_sums[w].y;
  }
  return total;
}

// The channel's totals from its chunks' partials (pairs), in chunk order.
__device__ double2 channel_total(const double2* partials, unsigned c, unsigned chunks) {
  double2 t{0, 0};
  for (unsigned k = 0; k < chunks; ++k) {
    t.x += partials[c * chunks + k].x;
    t.y += partials[c * chunks + k].y;
  }
  return t;
}

// Training forward, pass 1: per chunk, the sum of x (pair's second unused).
__global__ void __launch_bounds__(kThreads)
    sum_kernel(const float* __restrict__ x, Shape sh, double2* __restrict__ partials) {
  const unsigned c = blockIdx.y, chunk = blockIdx.x;
  const unsigned e0 = chunk * sh.s.per, e1 = min(sh.s.count, e0 + sh.s.per);
  float sum = 0.f;
  for (unsigned e = e0 + threadIdx.x; e < e1; e += kThreads) sum += x[at(sh, c, e)];
  const double2 t = block_sum(sum, 0.f);
  if (threadIdx.x == 0) partials[c * sh.s.chunks + chunk] = t;
}

// Pass 2: per chunk, the sum of squared deviations from the (float-rounded) mean.
__global__ void __launch_bounds__(kThreads)
    deviation_kernel(const float* __restrict__ x, Shape sh, const double2* __restrict__ sums,
                     double2* __restrict__ partials) {
  const unsigned c = blockIdx.y, chunk = blockIdx.x;
  const float mean = float(channel_total(sums, c, sh.s.chunks).x / double(sh.s.count));
  const unsigned e0 = chunk * sh.s.per, e1 = min(sh.s.count, e0 + sh.s.per);
  float sq = 0.f;
  for (unsigned e = e0 + threadIdx.x; e < e1; e += kThreads) {
    const float d = x[at(sh, c, e)] - mean;
    sq = fmaf(d, d, sq);
  }
  const double2 t = block_sum(sq, 0.f);
  if (threadIdx.x == 0) partials[c * sh.s.chunks + chunk] = t;
}

// Pass 3: the statistics (written once per channel, by its first chunk), then y.
__global__ void __launch_bounds__(kThreads)
    normalize_kernel(const float* __restrict__ x, Shape sh, const double2* __restrict__ sums,
                     const double2* __restrict__ deviations, const float* __restrict__ gamma,
                     const float* __restrict__ beta, float* __restrict__ running_mean,
                     float* __restrict__ running_var, float* __restrict__ save_mean,
                     float* __restrict__ save_invstd, float eps, float momentum, bool relu,
                     float* __restrict__ y) {
  const unsigned c = blockIdx.y, chunk = blockIdx.x;
  const double count = double(sh.s.count);
  const double mean = channel_total(sums, c, sh.s.chunks).x / count;
  // Deviations were taken from the float-rounded mean; correct for the rounding exactly.
  const double off = double(float(mean)) - mean;
  const double sumsq = fmax(0.0, channel_total(deviations, c, sh.s.chunks).x - count * off * off);
  const double var = sumsq / count, invstd = 1.0 / sqrt(var + double(eps));
  if (chunk == 0 && threadIdx.x == 0) {
    const double unbiased = count > 1 ? sumsq / (count - 1) : var;
    save_mean[c] = float(mean);
    save_invstd[c] = float(invstd);
    running_mean[c] = float((1.0 - momentum) * running_mean[c] + momentum * mean);
    running_var[c] = float((1.0 - momentum) * running_var[c] + momentum * unbiased);
  }
  const float scale = float(gamma[c] * invstd), shift = float(beta[c] - mean * gamma[c] * invstd);
  const unsigned e0 = chunk * sh.s.per, e1 = min(sh.s.count, e0 + sh.s.per);
  for (unsigned e = e0 + threadIdx.x; e < e1; e += kThreads) {
    const unsigned i = at(sh, c, e);
    const float v = x[i] * scale + shift;
    y[i] = relu && v <= 0.f ? 0.f : v;  // as relu_forward: a NaN stays NaN
  }
}

__global__ void __launch_bounds__(kThreads)
    infer_kernel(const float* __restrict__ x, Shape sh, const float* __restrict__ gamma,
                 const float* __restrict__ beta, const float* __restrict__ running_mean,
                 const float* __restrict__ running_var, float eps, bool relu,
                 float* __restrict__ y) {
  const unsigned c = blockIdx.y, chunk = blockIdx.x;
  const double invstd = 1.0 / sqrt(double(running_var[c]) + double(eps));
  const float scale = float(gamma[c] * invstd),
              shift = float(beta[c] - running_mean[c] * gamma[c] * invstd);
  const unsigned e0 = chunk * sh.s.per, e1 = min(sh.s.count, e0 + sh.s.per);
  for (unsigned e = e0 + threadIdx.x; e < e1; e += kThreads) {
    const unsigned i = at(sh, c, e);
    const float v = x[i] * scale + shift;
    y[i] = relu && v <= 0.f ? 0.f : v;  // as relu_forward: a NaN stays NaN
  }
}

// The gradient reaching the batch norm's output: through the ReLU (relu_backward's mask) when
// there is one.
__device__ float grad_in(const float* __restrict__ relu_y, const float* __restrict__ dy,
                         unsigned i) {
  return relu_y && !(relu_y[i] > 0.f) ? 0.f : dy[i];
}

// Backward, pass 1: per chunk, the sums of dy and of dy * (x - mean).
__global__ void __launch_bounds__(kThreads)
    grad_sum_kernel(const float* __restrict__ x, const float* __restrict__ relu_y,
                    const float* __restrict__ dy, Shape sh, const float* __restrict__ save_mean,
                    double2* __restrict__ partials) {
  const unsigned c = blockIdx.y, chunk = blockIdx.x;
  const float mean = save_mean[c];
  const unsigned e0 = chunk * sh.s.per, e1 = min(sh.s.count, e0 + sh.s.per);
  float sum_dy = 0.f, sum_dy_xc = 0.f;
  for (unsigned e = e0 + threadIdx.x; e < e1; e += kThreads) {
    const unsigned i = at(sh, c, e);
    const float d = grad_in(relu_y, dy, i);
    sum_dy += d;
    sum_dy_xc = fmaf(d, x[i] - mean, sum_dy_xc);
  }
  const double2 t = block_sum(sum_dy, sum_dy_xc);
  if (threadIdx.x == 0) partials[c * sh.s.chunks + chunk] = t;
}

// Pass 2: dgamma and dbeta (by the channel's first chunk), then
// dx = gamma * invstd * (dy - mean(dy) - xhat * mean(dy * xhat)).
__global__ void __launch_bounds__(kThreads)
    grad_apply_kernel(const float* __restrict__ x, const float* __restrict__ relu_y,
                      const float* dy, Shape sh, const double2* __restrict__ partials,
                      const float* __restrict__ gamma, const float* __restrict__ save_mean,
                      const float* __restrict__ save_invstd, float* dx, float* __restrict__ dgamma,
                      float* __restrict__ dbeta) {
  const unsigned c = blockIdx.y, chunk = blockIdx.x;
  const double2 t = channel_total(partials, c, sh.s.chunks);
  const double invstd = save_invstd[c], count = double(sh.s.count);
  const double sum_dy = t.x, sum_dy_xhat = t.y * invstd;
  if (chunk == 0 && threadIdx.x == 0) {
    dgamma[c] = float(sum_dy_xhat);
    dbeta[c] = float(sum_dy);
  }
  const double k = gamma[c] * invstd;
  const float a = float(k), b = float(-k * (sum_dy / count)),
              cx = float(-k * (sum_dy_xhat / count) * invstd), m = save_mean[c];
  const unsigned e0 = chunk * sh.s.per, e1 = min(sh.s.count, e0 + sh.s.per);
  for (unsigned e = e0 + threadIdx.x; e < e1; e += kThreads) {
    const unsigned i = at(sh, c, e);
    dx[i] = a * grad_in(relu_y, dy, i) + b + cx * (x[i] - m);
  }
}

Shape shape_of(const BatchNormGeom& g) {
  if (std::size_t(g.n) * g.c * g.hw >= (std::size_t{1} << 31) || g.c > 65535)
    throw Error("batchnorm: " + std::to_string(g.n) + " x " + std::to_string(g.c) + " x " +
                std::to_string(g.hw) + " values is more than the CUDA kernels take");
  return {unsigned(g.c), unsigned(g.hw), split_of(g)};
}

dim3 grid_of(const Shape& sh) { return dim3(sh.s.chunks, sh.c); }

}  // namespace

std::size_t batchnorm_scratch_floats(const BatchNormGeom& g) {
  // Two arrays of (channel, chunk) pairs of doubles.
  return 2 * std::size_t(g.c) * split_of(g).chunks * (sizeof(double2) / sizeof(float));
}

void batchnorm_train(const BatchNormGeom& g, const float* x, const float* gamma, const float* beta,
                     float* running_mean, float* running_var, float* save_mean, float* save_invstd,
                     float* y, bool relu, float* scratch, cudaStream_t stream) {
  const Shape sh = shape_of(g);
  auto* sums = reinterpret_cast<double2*>(scratch);
  double2* deviations = sums + std::size_t(g.c) * sh.s.chunks;
  sum_kernel<<<grid_of(sh), kThreads, 0, stream>>>(x, sh, sums);
  SWEEP_CHECK_LAUNCH();
  deviation_kernel<<<grid_of(sh), kThreads, 0, stream>>>(x, sh, sums, deviations);
  SWEEP_CHECK_LAUNCH();
  normalize_kernel<<<grid_of(sh), kThreads, 0, stream>>>(x, sh, sums, deviations, gamma, beta,
                                                         running_mean, running_var, save_mean,
                                                         save_invstd, g.eps, g.momentum, relu, y);
  SWEEP_CHECK_LAUNCH();
}

void batchnorm_infer(const BatchNormGeom& g, const float* x, const float* gamma, const float* beta,
                     const float* running_mean, const float* running_var, float* y, bool relu,
                     cudaStream_t stream) {
  const Shape sh = shape_of(g);
  infer_kernel<<<grid_of(sh), kThreads, 0, stream>>>(x, sh, gamma, beta, running_mean, running_var,
                                                     g.eps, relu, y);
  SWEEP_CHECK_LAUNCH();
}

void batchnorm_grad(const BatchNormGeom& g, const float* x, const float* relu_y, const float* dy,
                    const float* gamma, const float* save_mean, const float* save_invstd, float* dx,
                    float* dgamma, float* dbeta, float* scratch, cudaStream_t stream) {
  const Shape sh = shape_of(g);
  auto* partials = reinterpret_cast<double2*>(scratch);
  grad_sum_kernel<<<grid_of(sh), kThreads, 0, stream>>>(x, relu_y, dy, sh, save_mean, partials);
  SWEEP_CHECK_LAUNCH();
  grad_apply_kernel<<<grid_of(sh), kThreads, 0, stream>>>(
      x, relu_y, dy, sh, partials, gamma, save_mean, save_invstd, dx, dgamma, dbeta);
  SWEEP_CHECK_LAUNCH();
}

}  // namespace sweep::trainer::cuda
