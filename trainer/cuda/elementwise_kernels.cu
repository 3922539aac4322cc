/*
 * elementwise_kernels.cu — the kernels of elementwise.cuh (fill, relu, dropout, multiply, add, bias
 * adds and the bias-gradient sums), defined in one translation unit so that every .cu that
 * launches them through elementwise.cuh's launchers links against one copy.
 */
#include "trainer/cuda/elementwise.cuh"

namespace sweep::trainer::cuda {

__global__ void fill_kernel(float* x /* (n) */, std::size_t n, float value) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x)
    x[i] = value;
}

__global__ void relu_forward_kernel(const float* x /* (n) */, float* y /* (n) */, std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x) {
    const float v = x[i];
    y[i] = v <= 0.f ? 0.f : v;  // NaN stays NaN, as on the CPU and in PyTorch
  }
}

__global__ void relu_backward_kernel(const float* y /* (n) */, const float* dy /* (n) */,
                                     float* dx /* (n) */, std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x)
    dx[i] = y[i] > 0.f ? dy[i] : 0.f;
}

__global__ void dropout_kernel(const float* x /* (n) */, float* y /* (n) */, float* mask /* (n) */,
                               std::size_t n, float p, float keep_scale, std::uint64_t seed,
                               std::uint64_t counter) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x) {
    const float m = uniform01(hash2(seed, counter + i)) < p ? 0.f : keep_scale;
    mask[i] = m;
    y[i] = __fmul_rn(x[i], m);
  }
}

__global__ void mul_kernel(const float* a /* (n) */, const float* b /* (n) */, float* y /* (n) */,
                           std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x)
    y[i] = __fmul_rn(a[i], b[i]);
}

// y = a + b; y may alias a or b (each thread reads its element before writing it). __fadd_rn, so
// no contraction can make it differ from the CPU backend's sum.
__global__ void add_kernel(const float* a /* (n) */, const float* b /* (n) */, float* y /* (n) */,
                           std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x)
    y[i] = __fadd_rn(a[i], b[i]);
}

// y = max(0, a + b): add_kernel then relu_forward_kernel in one pass (a NaN stays NaN).
__global__ void add_relu_kernel(const float* a /* (n) */, const float* b /* (n) */,
                                float* y /* (n) */, std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x) {
    const float v = __fadd_rn(a[i], b[i]);
    y[i] = v <= 0.f ? 0.f : v;
  }
}

// y (rows, cols) += b (cols), row-major.
__global__ void add_row_bias_kernel(float* y, const float* b, std::size_t rows, int cols) {
  const std::size_t n = rows * cols;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x)
    y[i] += b[i % cols];
}

// y (rows, cols) = max(0, y + b (cols; may be null)): a dense layer's bias and the ReLU after it.
__global__ void add_row_bias_relu_kernel(float* y, const float* b, std::size_t rows, int cols) {
  const std::size_t n = rows * cols;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x) {
    const float v = b ? y[i] + b[i % cols] : y[i];
    y[i] = v <= 0.f ? 0.f : v;  // as relu_forward_kernel: a NaN stays NaN
  }
}

// y (n, k, plane) += b (k).
__global__ void add_channel_bias_kernel(float* y, const float* b, std::size_t total, int k,
                                        int plane) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < total;
       i += std::size_t(gridDim.x) * blockDim.x)
    y[i] += b[(i / plane) % k];
}

// db (cols) = column sums of dy (rows, cols). Block (32, 8): 32 adjacent columns (coalesced),
// 8 row groups; the 8 partial sums are added in row-group order.
__global__ void column_sums_kernel(const float* dy, float* db, int rows, int cols) {
  __shared__ float partial[8][33];
  const int c = blockIdx.x * 32 + threadIdx.x;
  float acc = 0.f;
  if (c < cols)
    for (int r = threadIdx.y; r < rows; r += 8) acc += dy[std::size_t(r) * cols + c];
  partial[threadIdx.y][threadIdx.x] = acc;
  __syncthreads();
  if (threadIdx.y == 0 && c < cols) {
    float total = 0.f;
    for (int g = 0; g < 8; ++g) total += partial[g][threadIdx.x];
    db[c] = total;
  }
}

// Pass 1 of the conv bias gradient: partial (k, chunks) = sums of dy (n, k, plane) over the
// samples of one chunk and the plane. A grid of k x chunks blocks fills the GPU even when k is
// small (LeNet's first layer has 20 channels and 576 values per plane).
__global__ void channel_partial_sums_kernel(const float* dy, float* partial, int n, int k,
                                            int plane, int per_chunk) {
  __shared__ float lanes[kThreads];
  const int ch = blockIdx.x, chunk = blockIdx.y, chunks = gridDim.y;
  const int s0 = chunk * per_chunk, s1 = min(n, s0 + per_chunk);
  const std::size_t count = s1 > s0 ? std::size_t(s1 - s0) * plane : 0;
  float acc = 0.f;
  for (std::size_t j = threadIdx.x; j < count; j += blockDim.x) {
    const std::size_t s = s0 + j / plane, q = j % plane;
    acc += dy[(s * k + ch) * plane + q];
  }
  lanes[threadIdx.x] = acc;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (int(threadIdx.x) < stride) lanes[threadIdx.x] += lanes[threadIdx.x + stride];
    __syncthreads();
  }
  if (threadIdx.x == 0) partial[std::size_t(ch) * chunks + chunk] = lanes[0];
}

// Pass 2: db (k) = the chunks' partial sums, added in chunk order.
__global__ void channel_total_kernel(const float* partial, float* db, int k, int chunks) {
  const int ch = blockIdx.x * blockDim.x + threadIdx.x;
  if (ch >= k) return;
  float total = 0.f;
  for (int j = 0; j < chunks; ++j) total += partial[std::size_t(ch) * chunks + j];
  db[ch] = total;
}

}  // namespace sweep::trainer::cuda
