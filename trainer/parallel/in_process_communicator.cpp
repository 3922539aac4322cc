/*
 * in_process_communicator.cpp — collectives over CPU replicas in one process.
 *
 * CPU backend ops run to completion before they return, so a collective is plain loops over host
 * memory: the sum is accumulated into replica 0's buffer in replica order (((x0 + x1) + x2) ...,
 * deterministic) and copied out to the others, so every replica ends with the same bits, as
 * NCCL's all-reduce guarantees on GPUs.
 */
#include <algorithm>
#include <cstring>

#include "common/check.h"
#include "trainer/parallel/communicator.h"

namespace sweep::trainer {

namespace {

class InProcessCommunicator final : public Communicator {
 public:
  explicit InProcessCommunicator(std::size_t replicas) : replicas_(replicas) {}

  std::string name() const override {
    return "in-process, " + std::to_string(replicas_) + " CPU replicas";
  }

  void all_reduce_sum(const std::vector<float*>& buffers, std::size_t n) override {
    check(buffers);
    float* sum = buffers[0];
    for (std::size_t r = 1; r < buffers.size(); ++r) {
      const float* x = buffers[r];
      for (std::size_t i = 0; i < n; ++i) sum[i] += x[i];
    }
    broadcast(buffers, n);
  }

  void broadcast(const std::vector<float*>& buffers, std::size_t n) override {
    check(buffers);
    for (std::size_t r = 1; r < buffers.size(); ++r)
      if (n) std::memcpy(buffers[r], buffers[0], n * sizeof(float));
  }

 private:
  void check(const std::vector<float*>& buffers) const {
    if (buffers.size() != replicas_)
      throw Error("communicator: " + std::to_string(buffers.size()) + " buffers for " +
                  std::to_string(replicas_) + " replicas");
  }
  std::size_t replicas_;
};

}  // namespace

std::unique_ptr<Communicator> make_in_process_communicator(const std::vector<Backend*>& backends) {
  for (const Backend* b : backends)
    if (b->kind() != DeviceKind::cpu)
      throw Error("the in-process communicator joins CPU replicas only, not " + b->name());
  return std::make_unique<InProcessCommunicator>(backends.size());
}

}  // namespace sweep::trainer
