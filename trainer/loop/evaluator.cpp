/*
 * evaluator.cpp — batched inference with statistics accumulated on the backend.
 *
 * Batch normalisation and dropout run in inference mode (training = false); the loss is the mean
 * over all images (sum of per-sample losses / count), not a mean of batch means, so a smaller last
 * batch is weighted correctly.
 */
#include "trainer/loop/evaluator.h"

#include <atomic>

#include "common/check.h"

namespace sweep::trainer {

Evaluator::Evaluator(Backend& backend, const Dataset& data, const ChannelStats& norm, int batch,
                     const DeviceDataset* uploaded)
    : backend_(backend),
      source_(backend, data, norm, batch, ShuffleMode::never, 0, AugmentSpec{}, false, uploaded),
      classes_(data.classes),
      labels_(backend, std::size_t(data.size()) * sizeof(std::int32_t)),
      preds_(backend, std::size_t(data.size()) * sizeof(std::int32_t)),
      stats_(backend, 2 * sizeof(double)) {}

void Evaluator::launch(Network& net, float* x, bool with_confusion) {
  with_confusion_ = with_confusion;
  const double zeros[2] = {0, 0};
  backend_.copy_to_device(stats_.as<void>(), zeros, sizeof zeros);
  const std::int64_t batches = source_.batches_per_epoch();
  const std::int64_t full = source_.size() / source_.batch();
  std::int64_t b = 0;
  // Two full batches at least: one eager (every shape seen), one recorded.
  if (full >= 2 && backend_.can_capture() && !graph_failed_) b = run_recorded(net, x, full);
  for (; b < batches; ++b) run_batch(net, x, b, with_confusion);
}

void Evaluator::run_batch(Network& net, float* x, std::int64_t b, bool argmax) {
  std::int32_t* y = labels_.as<std::int32_t>() + b * source_.batch();
  const int n = source_.gather(b, 0, false, x, y);
  const float* logits = net.forward(x, n, false);
  backend_.softmax_cross_entropy(logits, y, n, classes_, nullptr, stats_.as<double>());
  if (argmax) backend_.argmax(logits, n, classes_, preds_.as<std::int32_t>() + b * source_.batch());
}

std::int64_t Evaluator::run_recorded(Network& net, float* x, std::int64_t full) {
  // Keys are unique in the process, so a backend's graph recorded by another evaluator (or by
  // this one for another network) is never taken for ours.
  static std::atomic<std::uint64_t> next_key{1};
  constexpr std::int64_t kRecorded = 1;  // the batch the graph was recorded at
  std::int64_t b = 0;
  if (!(backend_.has_evaluation_graph(graph_key_) && graph_net_ == net.id() && graph_x_ == x)) {
    run_batch(net, x, 0, true);
    b = 1;
    graph_key_ = next_key.fetch_add(1);
    try {
      backend_.begin_evaluation_capture(graph_key_);
      run_batch(net, x, kRecorded, true);  // recorded, not run
      backend_.end_capture();
    } catch (const std::exception&) {
      backend_.drop_evaluation_graph();
      graph_failed_ = true;
      return b;
    }
    graph_net_ = net.id();
    graph_x_ = x;
  }
  backend_.replay_evaluation((b - kRecorded) * source_.batch(), source_.batch(), full - b);
  return full;
}

EvalResult Evaluator::collect() {
  const bool with_confusion = with_confusion_;
  double sums[2];
  backend_.copy_to_host(sums, stats_.as<void>(), sizeof sums);
  EvalResult r;
  r.images = source_.size();
  if (r.images > 0) {
    r.loss = sums[0] / double(r.images);
    r.accuracy = sums[1] / double(r.images);
  }
  if (with_confusion) {
    std::vector<std::int32_t> truth(std::size_t(r.images)), pred(std::size_t(r.images));
    if (r.images > 0) {
      backend_.copy_to_host(truth.data(), labels_.as<void>(), truth.size() * sizeof(std::int32_t));
      backend_.copy_to_host(pred.data(), preds_.as<void>(), pred.size() * sizeof(std::int32_t));
    }
    r.confusion.assign(std::size_t(classes_) * classes_, 0);
    for (std::size_t i = 0; i < truth.size(); ++i) {
      if (truth[i] < 0 || truth[i] >= classes_ || pred[i] < 0 || pred[i] >= classes_)
        throw Error("evaluation: label " + std::to_string(truth[i]) + " or prediction " +
                    std::to_string(pred[i]) + " outside 0.." + std::to_string(classes_ - 1));
      ++r.confusion[std::size_t(truth[i]) * classes_ + std::size_t(pred[i])];
    }
  }
  return r;
}

EvalResult combine(const std::vector<EvalResult>& parts) {
  EvalResult all;
  double loss = 0, correct = 0;
  for (const EvalResult& p : parts) {
    all.images += p.images;
    loss += p.loss * double(p.images);
    correct += p.accuracy * double(p.images);
    if (all.confusion.size() < p.confusion.size()) all.confusion.resize(p.confusion.size(), 0);
    for (std::size_t i = 0; i < p.confusion.size(); ++i) all.confusion[i] += p.confusion[i];
  }
  if (all.images > 0) {
    all.loss = loss / double(all.images);
    all.accuracy = correct / double(all.images);
  }
  return all;
}

}  // namespace sweep::trainer
