/*
 * nccl_communicator.cpp — the replicas' collectives through NCCL, one process driving every GPU.
 *
 * One communicator per GPU from ncclCommInitAll; each collective is one group call (ncclGroupStart
 * ... one call per replica on that replica's stream ... ncclGroupEnd), so a single host thread
 * launches on every GPU without deadlock. NCCL connects its peers lazily on the first collective
 * (allocations, host synchronisation), which a CUDA graph cannot record: the training loop runs
 * one eager step before it records one (backend.h's capture protocol), so the recorded all-reduce
 * is an already connected one.
 */
#include <nccl.h>

#include <set>

#include "common/check.h"
#include "trainer/cuda/cuda_backend.h"
#include "trainer/cuda_entry.h"
#include "trainer/parallel/communicator.h"

namespace sweep::trainer {

namespace {

class NcclCommunicator final : public Communicator {
 public:
  explicit NcclCommunicator(const std::vector<Backend*>& backends) {
    std::vector<int> devices;
    std::set<int> seen;
    for (Backend* b : backends) {
      auto* gpu = dynamic_cast<cuda::CudaBackend*>(b);
      if (!gpu) throw Error("NCCL joins CUDA replicas only, not " + b->name());
      if (!seen.insert(gpu->device()).second)
        throw Error("a data-parallel trial got GPU " + std::to_string(gpu->device()) +
                    " twice; each replica needs a GPU of its own");
      devices.push_back(gpu->device());
      gpus_.push_back(gpu);
    }
    comms_.resize(devices.size());
    SWEEP_CHECK_NCCL(
        ncclCommInitAll(comms_.data(), static_cast<int>(devices.size()), devices.data()));
    int version = 0;
    SWEEP_CHECK_NCCL(ncclGetVersion(&version));
    name_ = "NCCL " + std::to_string(version / 10000) + "." + std::to_string(version / 100 % 100) +
            "." + std::to_string(version % 100) + ", " + std::to_string(devices.size()) + " GPUs";
  }
  ~NcclCommunicator() override {
    for (ncclComm_t c : comms_)
      if (c) ncclCommDestroy(c);
  }
  NcclCommunicator(const NcclCommunicator&) = delete;
  NcclCommunicator& operator=(const NcclCommunicator&) = delete;

  std::string name() const override { return name_; }

  void all_reduce_sum(const std::vector<float*>& buffers, std::size_t n) override {
    check(buffers);
    if (n == 0) return;
    const std::vector<cudaStream_t> streams = joined_streams();
    SWEEP_CHECK_NCCL(ncclGroupStart());
    for (std::size_t r = 0; r < comms_.size(); ++r) {
      const ncclResult_t rc =
          ncclAllReduce(buffers[r], buffers[r], n, ncclFloat32, ncclSum, comms_[r], streams[r]);
      if (rc != ncclSuccess) {
        ncclGroupEnd();
        SWEEP_CHECK_NCCL(rc);
      }
    }
    SWEEP_CHECK_NCCL(ncclGroupEnd());
  }

  void broadcast(const std::vector<float*>& buffers, std::size_t n) override {
    check(buffers);
    if (n == 0) return;
    const std::vector<cudaStream_t> streams = joined_streams();
    SWEEP_CHECK_NCCL(ncclGroupStart());
    for (std::size_t r = 0; r < comms_.size(); ++r) {
      const ncclResult_t rc =
          ncclBroadcast(buffers[r], buffers[r], n, ncclFloat32, 0, comms_[r], streams[r]);
      if (rc != ncclSuccess) {
        ncclGroupEnd();
        SWEEP_CHECK_NCCL(rc);
      }
    }
    SWEEP_CHECK_NCCL(ncclGroupEnd());
  }

 private:
  void check(const std::vector<float*>& buffers) const {
    if (buffers.size() != comms_.size())
      throw Error("communicator: " + std::to_string(buffers.size()) + " buffers for " +
                  std::to_string(comms_.size()) + " replicas");
  }
  std::vector<cudaStream_t> joined_streams() const {
    std::vector<cudaStream_t> streams;
    for (cuda::CudaBackend* gpu : gpus_) streams.push_back(gpu->joined_stream());
    return streams;
  }
  std::vector<ncclComm_t> comms_;
  // Each reduction queues on its replica's stream after the backend's queued side work (the
  // weight gradients it reduces may still be running there).
  std::vector<cuda::CudaBackend*> gpus_;
  std::string name_;
};

}  // namespace

std::unique_ptr<Communicator> make_nccl_communicator(const std::vector<Backend*>& backends) {
  return std::make_unique<NcclCommunicator>(backends);
}

}  // namespace sweep::trainer
