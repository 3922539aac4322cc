/*
 * evaluator.cpp — batched inference with statistics accumulated on the backend.
 *
 * Batch normalisation and dropout run in inference mode (training = false); the loss is the mean
 * over all images (sum of per-sample losses / count), not a mean of batch means, so a smaller last
 * batch is weighted correctly.
 */
#include "trainer/eval/evaluator.h"

#include <atomic>
#include <cmath>

#include "common/check.h"
#include "trainer/eval/batch_loss.h"

namespace sweep::trainer {

Evaluator::Evaluator(Backend& backend, const Dataset& data, const ChannelStats& norm, int batch,
                     const DeviceDataset* uploaded)
    : backend_(backend),
      source_(backend, data, norm, batch, ShuffleMode::never, 0, AugmentSpec{}, false, uploaded),
      classes_(data.classes),
      labels_(backend, std::size_t(data.size()) * sizeof(std::int32_t)),
      preds_(backend, std::size_t(data.size()) * sizeof(std::int32_t)),
      stats_(backend, 2 * sizeof(double)) {
  for (const float t : data.targets) target_mean_ += double(t);
  if (!data.targets.empty()) target_mean_ /= double(data.targets.size());
  for (const float t : data.targets) {
    const double deviation = double(t) - target_mean_;
    target_m2_ += deviation * deviation;
  }
}

void Evaluator::launch(Network& net, float* x, bool with_confusion) {
  with_confusion_ = with_confusion;
  const double zeros[2] = {0, 0};
  backend_.copy_to_device(stats_.as<void>(), zeros, sizeof zeros);
  const std::int64_t batches = source_.batches_per_epoch();
  const std::int64_t full = source_.size() / source_.batch();
  std::int64_t b = 0;
  // Two full batches at least: one eager (every shape seen), one recorded.
  if (full >= 2 && backend_.graph_capture() && !graph_failed_) b = run_recorded(net, x, full);
  for (; b < batches; ++b) run_batch(net, x, b, with_confusion);
}

void Evaluator::run_batch(Network& net, float* x, std::int64_t b, bool argmax) {
  // Labels or targets, four bytes a sample either way (batch_loss.h).
  std::int32_t* y = labels_.as<std::int32_t>() + b * source_.batch();
  const int n = source_.gather(b, 0, false, x, y);
  const float* logits = net.forward(x, n, false);
  batch_loss(backend_, classes_, logits, y, n, nullptr, stats_.as<double>(), n);
  if (argmax && classes_ > 0)
    backend_.argmax(logits, n, classes_, preds_.as<std::int32_t>() + b * source_.batch());
}

std::int64_t Evaluator::run_recorded(Network& net, float* x, std::int64_t full) {
  // Keys are unique in the process, so a backend's graph recorded by another evaluator (or by
  // this one for another network) is never taken for ours.
  static std::atomic<std::uint64_t> next_key{1};
  constexpr std::int64_t kRecorded = 1;  // the batch the graph was recorded at
  std::int64_t b = 0;
  GraphCapture& graph = *backend_.graph_capture();  // run() asked that it exists
  if (!(graph.has_evaluation_graph(graph_key_) && graph_net_ == net.id() && graph_x_ == x)) {
    run_batch(net, x, 0, true);
    b = 1;
    graph_key_ = next_key.fetch_add(1);
    try {
      graph.begin_evaluation_capture(graph_key_);
      run_batch(net, x, kRecorded, true);  // recorded, not run
      graph.end_capture();
    } catch (const std::exception&) {
      graph.drop_evaluation_graph();
      graph_failed_ = true;
      return b;
    }
    graph_net_ = net.id();
    graph_x_ = x;
  }
  graph.replay_evaluation((b - kRecorded) * source_.batch(), source_.batch(), full - b);
  return full;
}

EvalResult Evaluator::collect() {
  const bool with_confusion = with_confusion_;
  double sums[2];
  backend_.copy_to_host(sums, stats_.as<void>(), sizeof sums);
  EvalResult r;
  r.images = source_.size();
  r.regression = classes_ == 0;
  if (r.images > 0) {
    r.loss = sums[0] / double(r.images);
    (r.regression ? r.mae : r.accuracy) = sums[1] / double(r.images);
  }
  r.target_mean = target_mean_;
  r.target_m2 = target_m2_;
  if (with_confusion && !r.regression) {
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

double EvalResult::rmse() const { return std::sqrt(loss); }

double EvalResult::r2() const {
  if (images == 0) return 0;
  return target_m2 > 0 ? 1.0 - loss * double(images) / target_m2 : 0.0;
}

EvalResult combine(const std::vector<EvalResult>& parts) {
  EvalResult all;
  double loss = 0, correct = 0, abs_sum = 0;
  for (const EvalResult& p : parts) {
    if (p.images > 0) {  // the targets' moments, merged (Chan, Golub and LeVeque)
      const double na = double(all.images), nb = double(p.images), n = na + nb;
      const double delta = p.target_mean - all.target_mean;
      all.target_m2 += p.target_m2 + delta * delta * na * nb / n;
      all.target_mean += delta * nb / n;
    }
    all.images += p.images;
    all.regression = all.regression || p.regression;
    loss += p.loss * double(p.images);
    correct += p.accuracy * double(p.images);
    abs_sum += p.mae * double(p.images);
    if (all.confusion.size() < p.confusion.size()) all.confusion.resize(p.confusion.size(), 0);
    for (std::size_t i = 0; i < p.confusion.size(); ++i) all.confusion[i] += p.confusion[i];
  }
  if (all.images > 0) {
    all.loss = loss / double(all.images);
    all.accuracy = correct / double(all.images);
    all.mae = abs_sum / double(all.images);
  }
  return all;
}

}  // namespace sweep::trainer
