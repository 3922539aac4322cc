/*
 * bench_cpu_lenet.cpp — LeNet training throughput (images/s) and quality on Fashion-MNIST, CPU.
 *
 * Timed through the public train() entry point, so the figure includes everything a sweep trial
 * pays per step (gather + normalise, forward, loss, backward, optimizer), but not data loading:
 * the clock starts at the callback of iteration `warmup` and stops at iteration warmup + iters.
 * The CPU backend is synchronous, so the callback's clock sees finished work.
 *
 *   bench_cpu_lenet [--batches 64 256] [--warmup 20] [--iters 200] [--threads 2]
 *   bench_cpu_lenet --quality [--epochs 10] [--batch 64]
 * Prints a table and `RESULT key=value ...` lines for bench/cpu/run.sh.
 */
#include <CLI/CLI.hpp>
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

TrainConfig lenet_config(const std::string& data, int batch, int epochs, int threads) {
  TrainConfig c = test::fashion_mnist_lenet(data, batch, epochs);
  c.training.seed = 1;
  c.device = DeviceSpec{DeviceKind::cpu, 0, threads};
  return c;
}

struct Timer : TrainCallback {
  std::int64_t start_at, stop_at;
  Clock::time_point t0, t1;
  bool on_iteration(const IterationInfo& i) override {
    if (i.iteration == start_at) t0 = Clock::now();
    if (i.iteration == stop_at) {
      t1 = Clock::now();
      return false;
    }
    return true;
  }
};

int throughput(const std::string& data, const std::vector<int>& batches, int warmup, int iters,
               int threads) {
  std::printf("%-8s %-8s %-10s %-12s %s\n", "batch", "iters", "seconds", "images/s", "device");
  for (int batch : batches) {
    // 1000 epochs: more than enough; the timer stops the run.
    TrainConfig c = lenet_config(data, batch, 1000, threads);
    c.data.validation = sweep::trainer::Validation::none;
    c.training.log_every = 1000000;
    Timer timer;
    timer.start_at = warmup;
    timer.stop_at = warmup + iters;
    const TrainResult r = train(c, timer);
    if (r.state != RunState::stopped_by_callback) {
      std::fprintf(stderr, "run ended early: %s\n", r.message.c_str());
      return 1;
    }
    const double dt = std::chrono::duration<double>(timer.t1 - timer.t0).count();
    const double ips = double(iters) * batch / dt;
    std::printf("%-8d %-8d %-10.3f %-12.1f %s\n", batch, iters, dt, ips, r.device.c_str());
    std::printf("RESULT peer=sweep batch=%d iters=%d seconds=%.3f images_per_second=%.1f\n", batch,
                iters, dt, ips);
    std::fflush(stdout);
  }
  return 0;
}

int quality(const std::string& data, int epochs, int batch, int threads) {
  TrainConfig c = lenet_config(data, batch, epochs, threads);
  c.training.log_every = 100;
  c.training.output_network = sweep::trainer::OutputNetwork::last;  // what the peer reports: the
                                                                    // network after the last epoch
  struct : TrainCallback {
    bool on_validation(const ValidationInfo& v) override {
      std::printf("epoch %d: test loss %.4f accuracy %.4f (%.1f s, %.0f images/s)\n", v.epoch,
                  v.val_loss, v.val_accuracy, v.elapsed_seconds, v.images_per_second);
      std::fflush(stdout);
      return true;
    }
  } cb;
  const TrainResult r = train(c, cb);
  std::printf(
      "RESULT peer=sweep quality epochs=%d batch=%d test_accuracy=%.4f test_loss=%.4f "
      "seconds=%.1f state=%s\n",
      r.epochs_completed, batch, r.final_val_accuracy, r.final_val_loss, r.elapsed_seconds,
      to_string(r.state));
  return r.state == RunState::completed ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"LeNet on Fashion-MNIST: CPU training throughput, or a 10-epoch quality run"};
  std::string data = "/usr/share/datasets/fashion-mnist";
  std::vector<int> batches = {64, 256};
  int warmup = 20, iters = 200, threads = 2, epochs = 10, batch = 64;
  bool run_quality = false;
  app.add_option("--data", data, "directory with the Fashion-MNIST idx files");
  app.add_option("--batches", batches, "batch sizes to time");
  app.add_option("--warmup", warmup, "untimed iterations first");
  app.add_option("--iters", iters, "timed iterations");
  app.add_option("--threads", threads, "CPU threads (0 = all)");
  app.add_flag("--quality", run_quality, "train --epochs epochs and report the test accuracy");
  app.add_option("--epochs", epochs, "epochs for --quality");
  app.add_option("--batch", batch, "batch size for --quality");
  CLI11_PARSE(app, argc, argv);
  try {
    return run_quality ? quality(data, epochs, batch, threads)
                       : throughput(data, batches, warmup, iters, threads);
  } catch (const sweep::Error& e) {
    std::fprintf(stderr, "bench_cpu_lenet: %s\n", e.what());
    return 1;
  }
}
