/*
 * cuda_data.cu — gather_batch of the CUDA backend (kernel in gather.cuh).
 *
 * The normalisation factors come in device memory, made once on the host by BatchSource
 * (gather_factors); the kernel does the CPU's two rounded operations per value with them, so
 * batches are equal to the CPU's bit for bit.
 */
#include <string>

#include "common/check.h"
#include "trainer/cuda/cuda_backend.h"
#include "trainer/cuda/gather.cuh"

namespace sweep::trainer::cuda {

void CudaBackend::gather_batch(const GatherDesc& d, float* x, void* y) {
  enter();
  if (d.c < 1) throw Error("gather_batch: samples have " + std::to_string(d.c) + " channels");
  if (!d.images == !d.features || !d.labels == !d.targets || !d.scale || !d.shift)
    throw Error(
        "gather_batch: needs one of images / features, one of labels / targets, and the "
        "normalisation factors");
  GatherArgs a{};
  a.batch = d.batch;
  a.c = d.c;
  a.h = d.h;
  a.w = d.w;
  a.center = d.center;
  a.scale = d.scale;
  a.shift = d.shift;
  a.flip = d.flip;
  a.max_shift = d.max_shift;
  a.seed = d.seed;
  a.step = d.step;
  a.first_sample = d.first_sample;
  auto with_data = [&](auto* yy, const auto* labels) {
    if (d.features)
      gather(a, d.features, labels, d.indices, x, yy, dyn(), stream());
    else
      gather(a, d.images, labels, d.indices, x, yy, dyn(), stream());
  };
  if (d.targets)
    with_data(static_cast<float*>(y), d.targets);
  else
    with_data(static_cast<std::int32_t*>(y), d.labels);
}

}  // namespace sweep::trainer::cuda
