/*
 * bench_gpu_train.cpp — what a user of train() gets on a GPU: LeNet on Fashion-MNIST through the
 * public entry point, with the loop's own CUDA-graph path, not a hand-written step.
 *
 * The one decision: throughput is timed between two points where the loop itself waits for the
 * GPU (its report reads, every log_every iterations and at the epoch's end), so the host clock
 * sees finished work without the bench adding a synchronisation of its own: from the end of the
 * first epoch to the end of the run (3 epochs by default); everything between (replays, the eager
 * partial batch, the per-epoch index upload, the per-step host bookkeeping and callback) is inside
 * the figure. Data loading, the first epoch's one-time costs and the end-of-run evaluation are
 * outside it.
 *
 *   bench_gpu_train --data DIR [--batches 64 256] [--epochs 3]     throughput over epochs 2..N
 *   bench_gpu_train --data DIR --quality [--epochs 10] [--batch 64] [--precision bf16]
 *                                                                  the 10-epoch quality run
 *   bench_gpu_train --data DIR --sequential8 [--epochs 2]          8 trials one after another
 * Prints `RESULT peer=sweep ...` lines for bench/gpu/run.sh.
 */
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "common/check.h"
#include "tests/trainer/lenet_config.h"
#include "trainer/train.h"

namespace {

using namespace sweep::trainer;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

TrainConfig lenet_config(const std::string& data, int batch, double lr, int epochs) {
  TrainConfig c = test::fashion_mnist_lenet(data, batch, epochs);
  c.training.learning_rate = lr;
  c.training.seed = 1;
  c.training.output_network = sweep::trainer::OutputNetwork::last;
  c.device = DeviceSpec{DeviceKind::cuda, 0, 0};
  return c;
}

// Loads the libraries' kernels into the context once, as a sweep process does with its first
// trial, so that the timed runs measure training.
void warm_up(const std::string& data) {
  TrainConfig c = lenet_config(data, 64, 0.01, 1);
  c.data.train_limit = 2048;
  c.data.test_limit = 512;
  TrainCallback quiet;
  train(c, quiet);
}

// Images trained between the report that ends the first epoch and the last report of the run:
// the steady state. The first epoch holds one-time costs of a new batch size in a process (cuDNN
// Find for its shapes, the lazy loading of kernels the warm-up trial did not use: up to ~70 ms,
// enough to swing a 0.2 s window by 20%); the later epochs' boundaries (eager partial batch,
// reshuffle and upload of the order) are inside the window.
struct ReportClock : TrainCallback {
  int batch = 64;
  bool started = false;
  Clock::time_point t0, t1;
  std::int64_t images = 0;
  bool on_iteration(const IterationInfo& i) override {
    if (started) images += batch;  // corrected for partial batches below
    if (!started && i.iteration == i.iterations_per_epoch) {
      started = true;
      t0 = Clock::now();
    }
    if (i.has_loss) t1 = Clock::now();
    return true;
  }
};

// Each batch size trains `repeats` times; the median is the figure (the GPU machine's host is
// shared and noisy: one b256 window of 0.2 s read 335k and the next 545k in the same call).
int throughput(const std::string& data, const std::vector<int>& batches, int epochs, int log_every,
               int repeats) {
  warm_up(data);
  for (int batch : batches) {
    std::vector<double> rates;
    for (int rep = 0; rep < repeats; ++rep) {
      TrainConfig c = lenet_config(data, batch, 0.01, epochs);
      c.data.validation = sweep::trainer::Validation::none;
      c.training.log_every = log_every;
      ReportClock clock;
      clock.batch = batch;
      const auto start = Clock::now();
      const TrainResult r = train(c, clock);
      const double whole = seconds_since(start);
      if (r.state != RunState::completed) throw sweep::Error("train(): " + r.message);
      // Every epoch ends with a partial batch of 60000 mod batch images (none when it divides).
      const std::int64_t partial = 60000 % batch;
      const std::int64_t images =
          clock.images - (partial ? std::int64_t(epochs - 1) * (batch - partial) : 0);
      rates.push_back(double(images) / std::chrono::duration<double>(clock.t1 - clock.t0).count());
      std::printf(
          "train() LeNet batch %d: %.0f images/s over epochs 2-%d (whole call %.2f s incl. "
          "loading; train()'s own figure %.0f images/s)\n",
          batch, rates.back(), epochs, whole, r.images_per_second);
    }
    std::sort(rates.begin(), rates.end());
    const double median = rates[rates.size() / 2];
    std::printf("train() LeNet batch %d: median of %d: %.0f images/s\n", batch, repeats, median);
    std::printf(
        "RESULT peer=sweep model=lenet batch=%d mode=train precision=fp32 "
        "images_per_second=%.0f\n",
        batch, median);
    std::fflush(stdout);
  }
  return 0;
}

int quality(const std::string& data, int epochs, int batch, const std::string& precision) {
  warm_up(data);
  TrainConfig c = lenet_config(data, batch, 0.01, epochs);
  const auto chosen = sweep::trainer::parse_word<sweep::trainer::Precision>(precision);
  if (!chosen)
    throw sweep::Error("--precision: not one of " +
                       sweep::trainer::words_text<sweep::trainer::Precision>());
  c.training.precision = *chosen;
  struct : TrainCallback {
    bool on_validation(const ValidationInfo& v) override {
      std::printf("epoch %d: test loss %.4f accuracy %.4f (%.2f s)\n", v.epoch, v.val_loss,
                  v.val_accuracy, v.elapsed_seconds);
      std::fflush(stdout);
      return true;
    }
  } cb;
  const auto start = Clock::now();
  const TrainResult r = train(c, cb);
  const double whole = seconds_since(start);
  std::printf(
      "RESULT peer=sweep quality epochs=%d batch=%d precision=%s test_accuracy=%.4f "
      "test_loss=%.4f train_seconds=%.2f call_seconds=%.2f state=%s\n",
      r.epochs_completed, batch, precision.c_str(), r.final_val_accuracy, r.final_val_loss,
      r.elapsed_seconds, whole, to_string(r.state));
  if (r.state != RunState::completed) std::printf("train(): %s\n", r.message.c_str());
  return r.state == RunState::completed ? 0 : 1;
}

// The 8 trials of bench/gpu/sweep8.yaml, one train() call after another in this process.
int sequential8(const std::string& data, int epochs) {
  const auto start = Clock::now();
  for (int batch : {64, 256})
    for (double lr : {0.001, 0.003, 0.01, 0.03}) {
      TrainCallback quiet;
      const auto t = Clock::now();
      const TrainResult r = train(lenet_config(data, batch, lr, epochs), quiet);
      std::printf("trial batch %d lr %g: %s, test accuracy %.4f, %.2f s\n", batch, lr,
                  to_string(r.state), r.final_val_accuracy, seconds_since(t));
      std::fflush(stdout);
    }
  std::printf("RESULT peer=sweep sequential8 epochs=%d seconds=%.2f\n", epochs,
              seconds_since(start));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"LeNet on Fashion-MNIST through train() on the GPU"};
  std::string data = "/usr/share/datasets/fashion-mnist";
  std::vector<int> batches = {64, 256};
  int epochs = 0, batch = 64, log_every = 10, repeats = 3;
  std::string precision = "fp32";
  bool run_quality = false, run_sequential8 = false;
  app.add_option("--data", data, "directory with the Fashion-MNIST idx files");
  app.add_option("--batches", batches, "batch sizes to time");
  app.add_option("--epochs", epochs, "epochs (default: 3 timed, 10 quality, 2 sequential8)");
  app.add_option("--batch", batch, "batch size for --quality");
  app.add_option("--log-every", log_every, "training.log_every for the throughput runs (10)");
  app.add_option("--repeats", repeats, "throughput runs per batch size; the median is reported");
  app.add_flag("--quality", run_quality, "train --epochs epochs and report the test accuracy");
  app.add_option("--precision", precision, "training.precision for --quality: fp32, tf32, bf16");
  app.add_flag("--sequential8", run_sequential8, "the 8-trial sweep as sequential train() calls");
  CLI11_PARSE(app, argc, argv);
  try {
    if (run_quality) return quality(data, epochs ? epochs : 10, batch, precision);
    if (run_sequential8) return sequential8(data, epochs ? epochs : 2);
    if (epochs == 1) throw sweep::Error("--epochs: the throughput window needs at least 2");
    if (repeats < 1) throw sweep::Error("--repeats must be at least 1");
    return throughput(data, batches, epochs ? epochs : 3, log_every, repeats);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_gpu_train: %s\n", e.what());
    return 1;
  }
}
