/*
 * replica_set.cpp — building the replicas and driving a data-parallel step.
 *
 * The step launches every replica's forward and backward first, then the all-reduce, then every
 * update: each GPU computes while the host goes on to the next. A replica whose share of a
 * (last, partial) batch is empty contributes zero gradients.
 */
#include "trainer/parallel/replica_set.h"

#include "common/check.h"
#include "trainer/data/device_dataset.h"
#include "trainer/eval/batch_loss.h"
#include "trainer/parallel/batch_share.h"

namespace sweep::trainer {

namespace {

// Each replica's dropout stream: the run's seed for the first (so one replica is the one-device
// run), mixed with the replica's number for the others.
std::uint64_t replica_seed(std::uint64_t seed, std::size_t replica) {
  return replica == 0 ? seed : seed ^ (0x9E3779B97F4A7C15ull * (replica + 1));
}

// The rows of `data` replica r of n evaluates: contiguous, as a batch is shared out.
Dataset validation_part(const Dataset& data, int n, int r) {
  const Share part = contiguous_share(data.size(), n, r);
  std::vector<std::int64_t> rows(static_cast<std::size_t>(part.count));
  for (std::int64_t i = 0; i < part.count; ++i) rows[std::size_t(i)] = part.begin + i;
  return take_rows(data, rows);
}

// The data's upload this replica's device can read, or null (it then uploads its own).
const SharedUpload* upload_for(const DeviceSpec& device, const LoadedData& data) {
  return data.uploaded && data.uploaded->serves(device) ? data.uploaded.get() : nullptr;
}

// The training options that are the backend's business: its precision and determinism.
DeviceSpec for_training(DeviceSpec spec, const TrainingSpec& training) {
  spec.precision = training.precision;
  spec.deterministic = training.deterministic;
  return spec;
}

}  // namespace

Replica::Replica(const DeviceSpec& device, const TrainConfig& cfg, const LoadedData& data,
                 const Dataset* validation_part, int max_batch, std::uint64_t dropout_seed)
    : backend(make_backend(for_training(device, cfg.training))),
      net(*backend, cfg.model, Shape{data.train.c, data.train.h, data.train.w}, data.train.classes,
          max_batch, cfg.training.seed),
      opt(*backend, cfg.training, net.param_count()),
      train(*backend, data.train, data.norm, cfg.training.batch_size, cfg.data.shuffle,
            cfg.training.seed, cfg.data.augment, true,
            upload_for(device, data) ? &upload_for(device, data)->train() : nullptr) {
  // The whole validation set (not a replica's slice of it) is what the upload holds.
  const SharedUpload* upload = upload_for(device, data);
  if (validation_part && !validation_part->empty())
    eval.emplace(*backend, *validation_part, data.norm, max_batch,
                 upload && validation_part == &data.validation ? upload->validation() : nullptr);
  const std::size_t in = std::size_t(max_batch) * std::size_t(data.train.image_bytes());
  x = DeviceBuffer(*backend, in * sizeof(float));
  // int32 labels or float targets (batch_loss.h): four bytes a sample either way.
  static_assert(sizeof(float) == sizeof(std::int32_t));
  y = DeviceBuffer(*backend, std::size_t(max_batch) * sizeof(std::int32_t));
  dlogits = DeviceBuffer(*backend, std::size_t(max_batch) * net.outputs() * sizeof(float));
  stats = DeviceBuffer(*backend, 3 * sizeof(double));
  const double zeros[3] = {0, 0, 0};
  backend->copy_to_device(stats.as<void>(), zeros, sizeof zeros);
  net.set_dropout_seed(dropout_seed);
}

ReplicaSet::ReplicaSet(const std::vector<DeviceSpec>& devices, const TrainConfig& cfg,
                       const LoadedData& data)
    : batch_(cfg.training.batch_size) {
  if (devices.empty()) throw Error("a trial needs at least one device");
  const int n = static_cast<int>(devices.size());
  if (batch_ < n)
    throw Error("training.batch_size is " + std::to_string(batch_) + ", smaller than the " +
                std::to_string(n) + " devices the trial is split over: each needs a sample");
  // The largest share of a batch: what each replica's activations are sized for.
  const int max_share = batch_share(batch_, n, 0).count;
  for (int r = 0; r < n; ++r) {
    const Dataset part =
        n > 1 && !data.validation.empty() ? validation_part(data.validation, n, r) : Dataset{};
    const Dataset* validation = n > 1 ? &part : &data.validation;
    replicas_.push_back(std::make_unique<Replica>(devices[std::size_t(r)], cfg, data, validation,
                                                  max_share,
                                                  replica_seed(cfg.training.seed, std::size_t(r))));
    // cuDNN's algorithm timing for the share a full batch gives this replica.
    if (ShapeTuning* tuning = replicas_.back()->backend->shape_tuning())
      tuning->tune_for_batch(batch_share(batch_, n, r).count);
  }
  if (n > 1) {
    std::vector<Backend*> backends;
    for (auto& r : replicas_) backends.push_back(r->backend.get());
    comm_ = make_communicator(backends);
  }
}

ReplicaSet::~ReplicaSet() = default;

std::string ReplicaSet::device_name() const {
  if (replicas_.size() == 1) return first_const().backend->name();
  std::string text = std::to_string(replicas_.size()) + " replicas: ";
  for (std::size_t r = 0; r < replicas_.size(); ++r)
    text += (r ? " + " : "") + replicas_[r]->backend->name();
  return text + ", " + comm_->name();
}

void ReplicaSet::for_each(const std::function<void(Replica&)>& fn) {
  for (auto& r : replicas_) fn(*r);
}

void ReplicaSet::begin_epoch(int epoch) {
  for (auto& r : replicas_) r->train.begin_epoch(epoch);
}

void ReplicaSet::step(std::int64_t batch_index, std::uint64_t iteration, const OptimizerStep& opt) {
  const int n = static_cast<int>(replicas_.size());
  const int b = batch_size_at(batch_index);
  for (int i = 0; i < n; ++i) {
    Replica& r = *replicas_[std::size_t(i)];
    const BatchShare share = batch_share(b, n, i);
    if (share.count == 0) {  // a last batch smaller than the replicas: nothing to add
      r.backend->fill(r.net.grads(), r.net.param_count(), 0.f);
      continue;
    }
    r.train.gather_part(batch_index, share.begin, share.count, iteration, true, r.x.f(),
                        r.y.as<void>());
    r.net.set_step(iteration);
    const float* out = r.net.forward(r.x.f(), share.count, true);
    batch_loss(*r.backend, r.net.classes(), out, r.y.as<void>(), share.count, r.dlogits.f(),
               r.stats.as<double>(), b);
    r.net.backward(r.dlogits.f(), share.count);
  }
  if (comm_) comm_->all_reduce_sum(grads_of(), first().net.param_count());
  for (auto& r : replicas_) r->opt.launch(opt, r->net.params(), r->net.grads());
}

// The step's graph of one replica's backend; the loop records only where can_capture() said so.
static GraphCapture& graph_of(Backend& backend) {
  GraphCapture* graph = backend.graph_capture();
  if (!graph) throw Error("internal: a step recorded on " + backend.name() + ", which cannot");
  return *graph;
}

void ReplicaSet::begin_capture() {
  for (auto& r : replicas_) graph_of(*r->backend).begin_capture();
}

void ReplicaSet::end_capture() {
  for (auto& r : replicas_) graph_of(*r->backend).end_capture();
}

void ReplicaSet::replay(const OptimizerStep& opt, std::uint64_t step, std::int64_t index_delta) {
  for (auto& r : replicas_) graph_of(*r->backend).replay(opt, step, index_delta);
}

void ReplicaSet::drop_graph() noexcept {
  for (auto& r : replicas_)
    if (GraphCapture* graph = r->backend->graph_capture()) graph->drop_graph();
}

std::array<double, 3> ReplicaSet::take_stats() {
  Replica& head = first();
  head.backend->sum_squares(head.net.params(), head.net.param_count(), head.stats.as<double>() + 2);
  std::array<double, 3> total{0, 0, 0};
  const double zeros[3] = {0, 0, 0};
  for (std::size_t i = 0; i < replicas_.size(); ++i) {
    Replica& r = *replicas_[i];
    double sums[3];
    r.backend->copy_to_host(sums, r.stats.as<void>(), sizeof sums);
    r.backend->copy_to_device(r.stats.as<void>(), zeros, sizeof zeros);
    total[0] += sums[0];
    total[1] += sums[1];
    if (i == 0) total[2] = sums[2];
  }
  return total;
}

std::array<double, 2> ReplicaSet::peek_stats() {
  std::array<double, 2> total{0, 0};
  for (auto& r : replicas_) {
    double sums[2];
    r->backend->copy_to_host(sums, r->stats.as<void>(), sizeof sums);
    total[0] += sums[0];
    total[1] += sums[1];
  }
  return total;
}

void ReplicaSet::put_stats(double loss_sum, double correct) {
  const double sums[3] = {loss_sum, correct, 0};
  first().backend->copy_to_device(first().stats.as<void>(), sums, sizeof sums);
}

EvalResult ReplicaSet::evaluate(bool with_confusion) {
  launch_evaluate(with_confusion);
  return collect_evaluate();
}

void ReplicaSet::launch_evaluate(bool with_confusion) {
  if (replicas_.size() > 1 && comm_ && first().net.state_count() > 0)
    comm_->broadcast(state_of(), first().net.state_count());
  for (auto& r : replicas_)
    if (r->eval) r->eval->launch(r->net, r->x.f(), with_confusion);
}

EvalResult ReplicaSet::collect_evaluate() {
  if (replicas_.size() == 1) return first().eval->collect();
  std::vector<EvalResult> parts;
  for (auto& r : replicas_)
    if (r->eval) parts.push_back(r->eval->collect());
  return combine(parts);
}

void ReplicaSet::sync_from_first() {
  if (!comm_) return;
  comm_->broadcast(params_of(), first().net.param_count());
  if (first().net.state_count() > 0) comm_->broadcast(state_of(), first().net.state_count());
}

void ReplicaSet::load(const std::vector<float>& params, const std::vector<float>& state,
                      const std::vector<float>& opt_state1, const std::vector<float>& opt_state2) {
  auto put = [](Backend& b, float* p, const std::vector<float>& v) {
    if (!v.empty()) b.copy_to_device(p, v.data(), v.size() * sizeof(float));
  };
  for (auto& r : replicas_) {
    put(*r->backend, r->net.params(), params);
    put(*r->backend, r->net.state(), state);
    put(*r->backend, r->opt.state1(), opt_state1);
    put(*r->backend, r->opt.state2(), opt_state2);
  }
}

std::vector<float*> ReplicaSet::params_of() {
  std::vector<float*> v;
  for (auto& r : replicas_) v.push_back(r->net.params());
  return v;
}
std::vector<float*> ReplicaSet::grads_of() {
  std::vector<float*> v;
  for (auto& r : replicas_) v.push_back(r->net.grads());
  return v;
}
std::vector<float*> ReplicaSet::state_of() {
  std::vector<float*> v;
  for (auto& r : replicas_) v.push_back(r->net.state());
  return v;
}

}  // namespace sweep::trainer
