/*
 * bf16_cast.cu — the conversion kernels of bf16.cuh and their one-launch-per-list launcher.
 */
#include "common/check.h"
#include "trainer/cuda/bf16.cuh"

namespace sweep::trainer::cuda {

namespace {

// A transposing cast goes through shared memory in 32 x 32 tiles (one image's channels by
// pixels), so both the reads and the writes are coalesced: read and written element by element
// with a stride of c or hw on one side, the casts ran at 1.1-1.3 TB/s on an H100. A job with few
// channels or pixels is cast element by element (a tile would be mostly empty), with no transpose
// at all when c or hw is 1. Index arithmetic is 32-bit (launch_casts checks the sizes).
constexpr int kTile = 32, kTileRows = 8, kBlock = kTile * kTileRows;
constexpr int kMinTiled = 16;  // channels and pixels at least, for the tiled cast

// The block's job, read with constant indices: indexing the kernel argument with blockIdx.y
// would copy the whole list to local memory in every thread.
template <class Job>
__device__ Job job_of(const CastList<Job>& list) {
  static_assert(kMaxCasts == 3);
  return blockIdx.y == 0 ? list.job[0] : blockIdx.y == 1 ? list.job[1] : list.job[2];
}

template <class Job>
__host__ __device__ bool tiled_cast(const Job& j) {
  return j.c >= kMinTiled && j.hw >= kMinTiled;
}

__global__ void __launch_bounds__(kBlock) narrow_kernel(CastList<NarrowJob> list) {
  __shared__ float tile[kTile][kTile + 1];
  const NarrowJob j = job_of(list);
  const unsigned c = unsigned(j.c), hw = unsigned(j.hw), n = unsigned(j.n);
  if (!tiled_cast(j)) {
    const unsigned total = n * c * hw;
    for (unsigned o = blockIdx.x * kBlock + threadIdx.y * kTile + threadIdx.x; o < total;
         o += gridDim.x * kBlock) {
      const unsigned ci = o % c, rest = o / c, p = rest % hw, ni = rest / hw;
      j.dst[o] = __float2bfloat16_rn(j.src[(ni * c + ci) * hw + p]);
    }
    return;
  }
  const unsigned ctiles = (c + kTile - 1) / kTile, ptiles = (hw + kTile - 1) / kTile;
  for (unsigned t = blockIdx.x; t < n * ctiles * ptiles; t += gridDim.x) {
    const unsigned p0 = t % ptiles * kTile, c0 = t / ptiles % ctiles * kTile,
                   ni = t / ptiles / ctiles;
    for (unsigned r = threadIdx.y; r < kTile; r += kTileRows) {  // rows: channels; along: pixels
      const unsigned ci = c0 + r, p = p0 + threadIdx.x;
      if (ci < c && p < hw) tile[r][threadIdx.x] = j.src[(ni * c + ci) * hw + p];
    }
    __syncthreads();
    for (unsigned r = threadIdx.y; r < kTile; r += kTileRows) {  // rows: pixels; along: channels
      const unsigned p = p0 + r, ci = c0 + threadIdx.x;
      if (ci < c && p < hw)
        j.dst[(ni * hw + p) * c + ci] = __float2bfloat16_rn(tile[threadIdx.x][r]);
    }
    __syncthreads();
  }
}

__global__ void __launch_bounds__(kBlock) widen_kernel(CastList<WidenJob> list) {
  __shared__ float tile[kTile][kTile + 1];
  const WidenJob j = job_of(list);
  const unsigned c = unsigned(j.c), hw = unsigned(j.hw), n = unsigned(j.n);
  if (!tiled_cast(j)) {
    const unsigned total = n * c * hw;
    for (unsigned o = blockIdx.x * kBlock + threadIdx.y * kTile + threadIdx.x; o < total;
         o += gridDim.x * kBlock) {
      const unsigned p = o % hw, rest = o / hw, ci = rest % c, ni = rest / c;
      const float v = __bfloat162float(j.src[(ni * hw + p) * c + ci]);
      j.dst[o] = j.bias ? v + j.bias[ci] : v;
    }
    return;
  }
  const unsigned ctiles = (c + kTile - 1) / kTile, ptiles = (hw + kTile - 1) / kTile;
  for (unsigned t = blockIdx.x; t < n * ctiles * ptiles; t += gridDim.x) {
    const unsigned p0 = t % ptiles * kTile, c0 = t / ptiles % ctiles * kTile,
                   ni = t / ptiles / ctiles;
    for (unsigned r = threadIdx.y; r < kTile; r += kTileRows) {  // rows: pixels; along: channels
      const unsigned p = p0 + r, ci = c0 + threadIdx.x;
      if (ci < c && p < hw) tile[r][threadIdx.x] = __bfloat162float(j.src[(ni * hw + p) * c + ci]);
    }
    __syncthreads();
    for (unsigned r = threadIdx.y; r < kTile; r += kTileRows) {  // rows: channels; along: pixels
      const unsigned ci = c0 + r, p = p0 + threadIdx.x;
      if (ci < c && p < hw) {
        const float v = tile[threadIdx.x][r];
        j.dst[(ni * c + ci) * hw + p] = j.bias ? v + j.bias[ci] : v;
      }
    }
    __syncthreads();
  }
}

// Converts each job with n > 0; one launch for the whole list.
template <class Job, class Kernel>
void launch_casts(Kernel kernel, std::initializer_list<Job> jobs, cudaStream_t stream) {
  if (jobs.size() > std::size_t(kMaxCasts)) throw Error("cuda: more casts than one launch takes");
  CastList<Job> list{};
  int count = 0;
  std::size_t blocks = 0;  // the most any job can use: its tiles, or its elements / block
  for (const Job& j : jobs) {
    if (j.n == 0) continue;
    const std::size_t size = std::size_t(j.n) * j.c * j.hw;
    if (size >= (std::size_t{1} << 31)) throw Error("cuda: a bf16 cast of 2^31 elements or more");
    list.job[count++] = j;
    const std::size_t tiles = tiled_cast(j) ? std::size_t(j.n) * ((j.c + kTile - 1) / kTile) *
                                                  ((j.hw + kTile - 1) / kTile)
                                            : (size + kBlock - 1) / kBlock;
    blocks = blocks > tiles ? blocks : tiles;
  }
  if (count == 0) return;
  // Enough blocks to fill the GPU a few times over; each walks its share of the tiles.
  const unsigned grid = static_cast<unsigned>(blocks < 4096 ? blocks : 4096);
  kernel<<<dim3(grid, count), dim3(kTile, kTileRows), 0, stream>>>(list);
  SWEEP_CHECK_CUDA(cudaGetLastError());
}

}  // namespace

void narrow(std::initializer_list<NarrowJob> jobs, cudaStream_t stream) {
  launch_casts(narrow_kernel, jobs, stream);
}
void widen(std::initializer_list<WidenJob> jobs, cudaStream_t stream) {
  launch_casts(widen_kernel, jobs, stream);
}

}  // namespace sweep::trainer::cuda
