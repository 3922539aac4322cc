/*
 * replica_set.h — the copies of one network that train one trial together (data parallel), or
 * the single copy of an ordinary trial: the training loop drives both the same way.
 *
 * Each replica is a full copy on its own backend (a GPU, or a CPU for tests): the network, the
 * optimizer, the training set (uploaded to each device once) and a slice of the validation set.
 * A step gives each replica its share of the same shuffled global batch (batch_share.h), runs
 * forward and backward there, sums the gradients across replicas (one all-reduce over the flat
 * gradient buffer) and runs the same update on every replica, so the weights stay identical
 * without ever being sent. With one replica nothing is summed and the step is the one-device step,
 * op for op.
 *
 * What differs from one device, as in Caffe's and PyTorch DDP's data parallelism:
 *  - batch normalisation normalises each replica's share with that share's statistics (per GPU,
 *    not over the global batch); the running statistics used for evaluation and saved in
 *    checkpoints are the first replica's (DDP's broadcast_buffers), copied to the others before
 *    each evaluation;
 *  - dropout draws each replica's masks from its own stream (seed, replica).
 * Everything else (the data order, augmentation, the loss, the update) is what one device would
 * compute for the same global batch, up to the order of floating-point sums.
 *
 * One host thread drives every replica: each op sets its backend's device, launches are
 * asynchronous, so the GPUs work at the same time; a captured step is one graph per GPU.
 */
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "trainer/backend/backend.h"
#include "trainer/data/batch_source.h"
#include "trainer/data/load_data.h"
#include "trainer/eval/evaluator.h"
#include "trainer/network.h"
#include "trainer/optim/optimizer.h"
#include "trainer/parallel/communicator.h"
#include "trainer/train_config.h"

namespace sweep::trainer {

struct Replica {
  Replica(const DeviceSpec& device, const TrainConfig& cfg, const LoadedData& data,
          const Dataset* validation_part, int max_batch, std::uint64_t dropout_seed);

  std::unique_ptr<Backend> backend;
  Network net;
  Optimizer opt;
  BatchSource train;
  std::optional<Evaluator> eval;      // over this replica's slice of the validation set
  DeviceBuffer x, y, dlogits, stats;  // stats: loss sum, correct, weights' sum of squares
};

class ReplicaSet {
 public:
  // One replica per entry of `devices` (one or more). Throws sweep::Error when the global batch
  // is smaller than the number of replicas, or the devices cannot be joined (communicator.h).
  ReplicaSet(const std::vector<DeviceSpec>& devices, const TrainConfig& cfg,
             const LoadedData& data);
  ~ReplicaSet();
  ReplicaSet(const ReplicaSet&) = delete;
  ReplicaSet& operator=(const ReplicaSet&) = delete;

  std::size_t size() const { return replicas_.size(); }
  Replica& first() { return *replicas_.front(); }
  Backend& backend() { return *first().backend; }
  Network& net() { return first().net; }
  Optimizer& optimizer() { return first().opt; }
  // "cpu (...)" for one replica; "2 replicas: cuda:0 (...) + cuda:1 (...), NCCL 2.27.7".
  std::string device_name() const;
  bool has_validation() const { return first_const().eval.has_value(); }
  void for_each(const std::function<void(Replica&)>& fn);

  // ---- training
  std::int64_t batches_per_epoch() const { return first_const().train.batches_per_epoch(); }
  int batch_size_at(std::int64_t b) const { return first_const().train.batch_size_at(b); }
  void begin_epoch(int epoch);
  // One step on batch `batch_index` of the epoch: every replica's share, gradients summed,
  // `opt` applied everywhere. Launches only.
  void step(std::int64_t batch_index, std::uint64_t iteration, const OptimizerStep& opt);
  bool can_capture() const { return first_const().backend->graph_capture() != nullptr; }
  void begin_capture();
  void end_capture();
  void replay(const OptimizerStep& opt, std::uint64_t step, std::int64_t index_delta);
  void drop_graph() noexcept;

  // ---- the loss / correct sums accumulated on the replicas since the last take_stats
  // {loss sum, correct, first replica's weights' sum of squares}; zeroes the sums.
  std::array<double, 3> take_stats();
  std::array<double, 2> peek_stats();               // {loss sum, correct}, left in place
  void put_stats(double loss_sum, double correct);  // on the first replica (resume)

  // ---- evaluation over the whole validation set, shared out; the first replica's weights and
  // statistics are copied to the others first.
  EvalResult evaluate(bool with_confusion);
  // The same in two halves: the device work launched, then (later) waited for and read.
  void launch_evaluate(bool with_confusion);
  EvalResult collect_evaluate();
  // Copies the first replica's weights and batch-norm statistics to the others.
  void sync_from_first();
  // Sets weights / statistics / optimizer state on every replica (restore from a checkpoint).
  void load(const std::vector<float>& params, const std::vector<float>& state,
            const std::vector<float>& opt_state1, const std::vector<float>& opt_state2);

 private:
  const Replica& first_const() const { return *replicas_.front(); }
  std::vector<float*> params_of();
  std::vector<float*> grads_of();
  std::vector<float*> state_of();

  int batch_;  // the global mini-batch
  std::vector<std::unique_ptr<Replica>> replicas_;
  std::unique_ptr<Communicator> comm_;  // null with one replica
};

}  // namespace sweep::trainer
