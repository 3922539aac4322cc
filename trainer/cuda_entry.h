/*
 * cuda_entry.h — the only door from the engine into the CUDA backend library.
 *
 * backend_factory.cpp calls these under `#if SWEEP_HAVE_CUDA`; trainer/cuda/ defines them. Keeping
 * the declarations here (and nothing CUDA in them) lets the CPU-only build compile the factory
 * without a single CUDA header.
 */
#pragma once

#include <memory>
#include <vector>

#include "trainer/backend.h"

namespace sweep::trainer {

// Builds the cuDNN + cuBLAS backend on spec.index (spec.index < 0: the current device). Throws
// sweep::Error when the device does not exist.
std::unique_ptr<Backend> make_cuda_backend(const DeviceSpec& spec);
// Number of visible CUDA devices; 0 when the driver reports none (never throws).
int cuda_device_count_impl();
// Starts `device`'s context and loads cuDNN and cuBLAS (a handle of each made and dropped), once
// per device and process. Never throws: what fails here fails again, reported, when the device's
// backend is made.
void warm_up_cuda_device(int device);

class Communicator;  // trainer/parallel/communicator.h
// NCCL over CUDA backends on distinct GPUs of this machine (only in builds with SWEEP_HAVE_NCCL).
std::unique_ptr<Communicator> make_nccl_communicator(const std::vector<Backend*>& backends);

}  // namespace sweep::trainer
