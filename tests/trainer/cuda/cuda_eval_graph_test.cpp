/*
 * cuda_eval_graph_test.cpp — the evaluation pass through its recorded graph (Evaluator on the
 * CUDA backend) gives exactly the eager pass's numbers: the first pass (which records), later
 * passes after the weights changed (which only replay), a second network and a second evaluator
 * on the same backend (each must record its own graph, never replay the other's), and a training
 * step's graph recorded in between (the two graphs write the same device block of per-replay
 * values).
 *
 * The reference is the same backend's ops run one by one over the same batches: the same kernels
 * and cuDNN plans, so loss sums, accuracies and confusion matrices are compared for equality.
 */
#include <numeric>
#include <optional>

#include "tests/trainer/cuda/cuda_test_util.h"
#include "trainer/data/batch_source.h"
#include "trainer/data/synthetic.h"
#include "trainer/eval/evaluator.h"
#include "trainer/network.h"

namespace sweep::trainer::test {
namespace {

constexpr int kBatch = 64;

Dataset synthetic_split(int size, const std::string& split) {
  SyntheticSpec spec;
  spec.train_size = size;
  spec.test_size = size;
  return make_synthetic(spec, split);
}

// The pass as the evaluator ran it before it recorded graphs: every batch's ops, eagerly.
EvalResult eager_pass(Backend& b, const Dataset& data, const ChannelStats& norm, Network& net,
                      float* x) {
  BatchSource source(b, data, norm, kBatch, ShuffleMode::never, 0, AugmentSpec{}, false);
  DeviceBuffer labels(b, std::size_t(data.size()) * 4), preds(b, std::size_t(data.size()) * 4),
      stats(b, 16);
  b.fill(stats.f(), 4, 0.f);  // two doubles of zero bits
  for (std::int64_t i = 0; i < source.batches_per_epoch(); ++i) {
    std::int32_t* y = labels.as<std::int32_t>() + i * kBatch;
    const int n = source.gather(i, 0, false, x, y);
    const float* logits = net.forward(x, n, false);
    b.softmax_cross_entropy(logits, y, n, data.classes, nullptr, stats.as<double>());
    b.argmax(logits, n, data.classes, preds.as<std::int32_t>() + i * kBatch);
  }
  double sums[2];
  b.copy_to_host(sums, stats.as<void>(), sizeof sums);
  std::vector<std::int32_t> truth(std::size_t(data.size())), pred(truth.size());
  b.copy_to_host(truth.data(), labels.as<void>(), truth.size() * 4);
  b.copy_to_host(pred.data(), preds.as<void>(), pred.size() * 4);
  EvalResult r;
  r.images = data.size();
  r.loss = sums[0] / double(r.images);
  r.accuracy = sums[1] / double(r.images);
  r.confusion.assign(std::size_t(data.classes) * data.classes, 0);
  for (std::size_t i = 0; i < truth.size(); ++i)
    ++r.confusion[std::size_t(truth[i]) * data.classes + std::size_t(pred[i])];
  return r;
}

EvalResult evaluate(Evaluator& ev, Network& net, float* x, bool with_confusion) {
  ev.launch(net, x, with_confusion);
  return ev.collect();
}

void expect_same(const EvalResult& got, const EvalResult& want, bool with_confusion,
                 const char* what) {
  EXPECT_EQ(got.images, want.images) << what;
  EXPECT_EQ(got.loss, want.loss) << what;
  EXPECT_EQ(got.accuracy, want.accuracy) << what;
  if (with_confusion) {
    EXPECT_EQ(got.confusion, want.confusion) << what;
  }
}

// Moves every weight a little, as a training step would, so a replay must read the new ones.
void perturb(Backend& b, Network& net, int salt) {
  std::vector<float> p(net.param_count());
  b.copy_to_host(p.data(), net.params(), p.size() * 4);
  for (std::size_t i = 0; i < p.size(); ++i)
    p[i] *= 1.f + 0.05f * float(int((i * 7 + std::size_t(salt)) % 11) - 5) / 5.f;
  b.copy_to_device(net.params(), p.data(), p.size() * 4);
}

TEST(CudaEvalGraph, RecordedPassesEqualEagerPasses) {
  SWEEP_SKIP_WITHOUT_CUDA();
  cuda::CudaBackend gpu(0);
  // 1000 images: 15 full batches and a last one of 40, which stays eager.
  const Dataset val = synthetic_split(1000, "test");
  const ChannelStats norm = channel_stats(val);
  ModelSpec model;  // lenet
  Network net(gpu, model, Shape{1, 28, 28}, 10, kBatch, 3);
  DeviceBuffer x(gpu, std::size_t(kBatch) * 784 * 4);
  Evaluator ev(gpu, val, norm, kBatch);

  expect_same(evaluate(ev, net, x.f(), true), eager_pass(gpu, val, norm, net, x.f()), true,
              "first pass (records)");
  for (int round = 1; round <= 3; ++round) {
    perturb(gpu, net, round);
    const bool confusion = round != 2;
    expect_same(evaluate(ev, net, x.f(), confusion), eager_pass(gpu, val, norm, net, x.f()),
                confusion, "a later pass (replays)");
  }
}

TEST(CudaEvalGraph, AnotherNetworkOrEvaluatorRecordsItsOwn) {
  SWEEP_SKIP_WITHOUT_CUDA();
  cuda::CudaBackend gpu(0);
  const Dataset val = synthetic_split(600, "test"), test = synthetic_split(700, "train");
  const ChannelStats norm = channel_stats(val);
  ModelSpec model;
  Network a(gpu, model, Shape{1, 28, 28}, 10, kBatch, 3),
      b(gpu, model, Shape{1, 28, 28}, 10, kBatch, 4);
  DeviceBuffer x(gpu, std::size_t(kBatch) * 784 * 4), x2(gpu, std::size_t(kBatch) * 784 * 4);
  Evaluator on_val(gpu, val, norm, kBatch), on_test(gpu, test, norm, kBatch);
  for (int round = 0; round < 2; ++round) {
    expect_same(evaluate(on_val, a, x.f(), true), eager_pass(gpu, val, norm, a, x.f()), true,
                "network a on the validation set");
    expect_same(evaluate(on_val, b, x.f(), true), eager_pass(gpu, val, norm, b, x.f()), true,
                "network b, same evaluator");
    expect_same(evaluate(on_test, a, x.f(), true), eager_pass(gpu, test, norm, a, x.f()), true,
                "network a, a second evaluator on the backend");
    expect_same(evaluate(on_val, a, x2.f(), true), eager_pass(gpu, val, norm, a, x2.f()), true,
                "another input buffer");
  }
  // A network destroyed and another built where it was: its id differs, so nothing stale replays.
  std::optional<Network> c;
  c.emplace(gpu, model, Shape{1, 28, 28}, 10, kBatch, 5);
  evaluate(on_val, *c, x.f(), true);
  c.emplace(gpu, model, Shape{1, 28, 28}, 10, kBatch, 6);
  expect_same(evaluate(on_val, *c, x.f(), true), eager_pass(gpu, val, norm, *c, x.f()), true,
              "a network built after another was destroyed");
}

// The training step's graph and the evaluation graph on one backend, both writing the block of
// per-replay values the captured ops read: the step keeps its learning rate and index offset and
// the pass its offsets; both equal their eager runs.
TEST(CudaEvalGraph, TrainingStepGraphAndEvaluationGraphTakeTurns) {
  SWEEP_SKIP_WITHOUT_CUDA();
  constexpr int kSteps = 12;
  const Dataset train = synthetic_split(kBatch * kSteps, "train");
  const Dataset val = synthetic_split(500, "test");
  const ChannelStats norm = channel_stats(train);
  ModelSpec model;

  auto run = [&](bool graphs) {
    cuda::CudaBackend gpu(0);
    Network net(gpu, model, Shape{1, 28, 28}, 10, kBatch, 9);
    DeviceBuffer x(gpu, std::size_t(kBatch) * 784 * 4), y(gpu, kBatch * 4),
        dl(gpu, kBatch * 10 * 4), stats(gpu, 16), s1(gpu, net.param_count() * 4);
    BatchSource source(gpu, train, norm, kBatch, ShuffleMode::never, 0, AugmentSpec{}, true);
    Evaluator ev(gpu, val, norm, kBatch);
    auto opt = [](int i) {
      OptimizerStep s;
      s.lr = 0.02f + 0.01f * float(i % 3);
      s.momentum = 0.9f;
      s.t = i + 1;
      return s;
    };
    auto step = [&](int i) {
      source.gather(i, std::uint64_t(i), false, x.f(), y.as<std::int32_t>());
      const float* logits = net.forward(x.f(), kBatch, true);
      gpu.softmax_cross_entropy(logits, y.as<std::int32_t>(), kBatch, 10, dl.f(),
                                stats.as<double>());
      net.backward(dl.f(), kBatch);
      gpu.optimizer_step(opt(i), net.params(), net.grads(), s1.f(), nullptr, net.param_count(),
                         nullptr);
    };
    std::vector<EvalResult> passes;
    for (int i = 0; i < kSteps; ++i) {
      if (graphs && i == 1) {
        gpu.begin_capture();
        step(i);
        gpu.end_capture();
      }
      if (graphs && i >= 1)
        gpu.replay(opt(i), std::uint64_t(i), std::int64_t(i - 1) * kBatch);
      else
        step(i);
      if (i % 4 == 3)
        passes.push_back(graphs ? evaluate(ev, net, x.f(), true)
                                : eager_pass(gpu, val, norm, net, x.f()));
    }
    std::vector<float> p(net.param_count());
    gpu.copy_to_host(p.data(), net.params(), p.size() * 4);
    return std::make_pair(passes, p);
  };
  const auto [graphed, graphed_params] = run(true);
  const auto [eager, eager_params] = run(false);
  ASSERT_EQ(graphed.size(), eager.size());
  // The step's replay equals the eager step within rounding (test CudaGraph.ReplayedSteps...);
  // the evaluations then see nearly the same weights: compare at that tolerance.
  for (std::size_t i = 0; i < graphed.size(); ++i) {
    EXPECT_NEAR(graphed[i].loss, eager[i].loss, 1e-4 * eager[i].loss) << "pass " << i;
    EXPECT_NEAR(graphed[i].accuracy, eager[i].accuracy, 2.0 / 500) << "pass " << i;
  }
  std::size_t bad = 0;
  for (std::size_t i = 0; i < eager_params.size(); ++i)
    if (!(std::fabs(graphed_params[i] - eager_params[i]) <=
          1e-5f + 1e-4f * std::fabs(eager_params[i])))
      ++bad;
  EXPECT_EQ(bad, 0u) << "parameters differ after steps replayed between evaluation passes";
}

}  // namespace
}  // namespace sweep::trainer::test
