/*
 * cuda_data.cu — gather_batch of the CUDA backend (kernel in gather.cuh).
 *
 * The normalisation factors are computed here on the host with exactly the CPU backend's float
 * expressions (1 / (255 std), -mean / std) and passed to the kernel, which then does the same two
 * rounded operations per value: batches are equal to the CPU's bit for bit.
 */
#include <string>

#include "common/check.h"
#include "trainer/cuda/cuda_backend.h"
#include "trainer/cuda/gather.cuh"

namespace sweep::trainer::cuda {

void CudaBackend::gather_batch(const GatherDesc& d, float* x, std::int32_t* y) {
  enter();
  if (d.c < 1 || d.c > 4)
    throw Error("gather_batch: images have " + std::to_string(d.c) +
                " channels; 1 to 4 are supported");
  GatherArgs a{};
  a.batch = d.batch;
  a.c = d.c;
  a.h = d.h;
  a.w = d.w;
  for (int c = 0; c < d.c; ++c) {
    a.scale[c] = 1.f / (255.f * d.stdev[c]);
    a.shift[c] = -d.mean[c] / d.stdev[c];
  }
  a.flip = d.flip;
  a.max_shift = d.max_shift;
  a.seed = d.seed;
  a.step = d.step;
  a.first_sample = d.first_sample;
  gather(a, d.images, d.labels, d.indices, x, y, dyn(), stream());
}

}  // namespace sweep::trainer::cuda
