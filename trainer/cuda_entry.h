/*
 * cuda_entry.h — the only door from the engine into the CUDA backend library.
 *
 * backend_factory.cpp and make_communicator.cpp call these; trainer/cuda/ defines them in a build
 * with CUDA, trainer/no_cuda/ in one without (each refusing with the reason). The choice is made
 * when linking, never by a macro, so the engine's own files compile the same either way and a
 * build tree that turns CUDA on recompiles none of them.
 */
#pragma once

#include <memory>
#include <vector>

#include "trainer/backend/backend.h"

namespace sweep::trainer {

// Whether the library behind this door is the real CUDA backend.
bool cuda_backend_linked();
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
// NCCL over CUDA backends on distinct GPUs of this machine; throws, saying why, in a build without
// NCCL.
std::unique_ptr<Communicator> make_nccl_communicator(const std::vector<Backend*>& backends);

}  // namespace sweep::trainer
