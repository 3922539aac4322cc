/*
 * nhwc_cast.cu — the conversion kernels of nhwc_cast.cuh and their one-launch-per-list launcher.
 */
#include "common/check.h"
#include "trainer/cuda/nhwc_cast.cuh"

namespace sweep::trainer::cuda {

namespace {

// A transposing cast goes through shared memory in 32 x 32 tiles (one image's channels by
// pixels), so both the reads and the writes are coalesced (element by element, one side strides
// by c or hw and runs at a fraction of the memory's bandwidth). A job with few
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

// One element as stored, from and to fp32 (bf16: rounded to nearest even).
__device__ __forceinline__ float get(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ __forceinline__ float get(float v) { return v; }
__device__ __forceinline__ void put(__nv_bfloat16* p, float v) { *p = __float2bfloat16_rn(v); }
__device__ __forceinline__ void put(float* p, float v) { *p = v; }

// Both casts are one transpose: src (n, a, b) with b contiguous to dst (n, b, a) with a
// contiguous. To NHWC: a = channels, b = pixels, fp32 to T. To NCHW: a = pixels, b = channels,
// T to fp32 plus the channel's bias.
template <class T>
struct NhwcCast {
  using Job = ToNhwc<T>;
  static __device__ unsigned a(const Job& j) { return unsigned(j.c); }
  static __device__ unsigned b(const Job& j) { return unsigned(j.hw); }
  static __device__ float load(const Job& j, unsigned i) { return j.src[i]; }
  static __device__ void store(const Job& j, unsigned i, unsigned, unsigned, float v) {
    put(j.dst + i, v);
  }
};
template <class T>
struct NchwCast {
  using Job = ToNchw<T>;
  static __device__ unsigned a(const Job& j) { return unsigned(j.hw); }
  static __device__ unsigned b(const Job& j) { return unsigned(j.c); }
  static __device__ float load(const Job& j, unsigned i) { return get(j.src[i]); }
  static __device__ void store(const Job& j, unsigned i, unsigned, unsigned bi, float v) {
    j.dst[i] = j.bias ? v + j.bias[bi] : v;
  }
};

template <class Cast>
__global__ void __launch_bounds__(kBlock) cast_kernel(CastList<typename Cast::Job> list) {
  __shared__ float tile[kTile][kTile + 1];
  const typename Cast::Job j = job_of(list);
  const unsigned na = Cast::a(j), nb = Cast::b(j), n = unsigned(j.n);
  if (!tiled_cast(j)) {  // element by element, walking dst in order
    const unsigned total = n * na * nb;
    for (unsigned o = blockIdx.x * kBlock + threadIdx.y * kTile + threadIdx.x; o < total;
         o += gridDim.x * kBlock) {
      const unsigned ai = o % na, rest = o / na, bi = rest % nb, ni = rest / nb;
      Cast::store(j, o, ai, bi, Cast::load(j, (ni * na + ai) * nb + bi));
    }
    return;
  }
  const unsigned atiles = (na + kTile - 1) / kTile, btiles = (nb + kTile - 1) / kTile;
  for (unsigned t = blockIdx.x; t < n * atiles * btiles; t += gridDim.x) {
    const unsigned b0 = t % btiles * kTile, a0 = t / btiles % atiles * kTile,
                   ni = t / btiles / atiles;
    for (unsigned r = threadIdx.y; r < kTile; r += kTileRows) {  // rows: a; along: b (src order)
      const unsigned ai = a0 + r, bi = b0 + threadIdx.x;
      if (ai < na && bi < nb) tile[r][threadIdx.x] = Cast::load(j, (ni * na + ai) * nb + bi);
    }
    __syncthreads();
    for (unsigned r = threadIdx.y; r < kTile; r += kTileRows) {  // rows: b; along: a (dst order)
      const unsigned bi = b0 + r, ai = a0 + threadIdx.x;
      if (ai < na && bi < nb)
        Cast::store(j, (ni * nb + bi) * na + ai, ai, bi, tile[threadIdx.x][r]);
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
    if (size >= (std::size_t{1} << 31))
      throw Error("cuda: a channels-last cast of 2^31 elements or more");
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

template <class T>
void to_nhwc(std::initializer_list<ToNhwc<T>> jobs, cudaStream_t stream) {
  launch_casts(cast_kernel<NhwcCast<T>>, jobs, stream);
}
template <class T>
void to_nchw(std::initializer_list<ToNchw<T>> jobs, cudaStream_t stream) {
  launch_casts(cast_kernel<NchwCast<T>>, jobs, stream);
}
template void to_nhwc<__nv_bfloat16>(std::initializer_list<ToNhwc<__nv_bfloat16>>, cudaStream_t);
template void to_nhwc<float>(std::initializer_list<ToNhwc<float>>, cudaStream_t);
template void to_nchw<__nv_bfloat16>(std::initializer_list<ToNchw<__nv_bfloat16>>, cudaStream_t);
template void to_nchw<float>(std::initializer_list<ToNchw<float>>, cudaStream_t);

}  // namespace sweep::trainer::cuda
