/*
 * bench_data_parallel.cpp — one trial on 1 GPU and on 2 (data parallel through NCCL), through
 * train(), the loop a user gets (its CUDA graph, with the all-reduce recorded in each GPU's graph).
 *
 * The data set is the seeded synthetic one (65,536 images by default, 1x28x28 for LeNet, 3x32x32
 * for MATLAB's CIFAR-10 conv-block net, width 32, depth 4), as bench/gpu/torch_ddp.py's peer uses
 * random bytes of the same shapes; log_every 50 (a report read every 50 steps). Throughput is timed
 * as in bench_gpu_train: between the loop's own report reads, from the end of the first epoch to
 * the end of the run, so warm-up, cuDNN's timing, NCCL's connection and the graph recording fall
 * outside. Validation is off.
 *
 *   bench_data_parallel [--models lenet convnet] [--batches 256 1024] [--gpus 1 2]
 *                       [--precision fp32|tf32|bf16] [--epochs 4] [--rows 65536]
 * Prints `RESULT peer=sweep model=.. gpus=.. batch=.. precision=.. images_per_second=..` lines
 * (batch is the global batch).
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

TrainConfig config(const std::string& model, int batch, int gpus, Precision precision, int epochs,
                   int rows) {
  TrainConfig c = test::lenet_config(batch, epochs);  // the convnet is trained by LeNet's recipe
  c.data.dataset = DatasetKind::synthetic;
  c.data.synthetic.train_size = rows;
  c.data.synthetic.test_size = 256;
  c.data.validation = Validation::none;
  if (model == "convnet") {
    c.data.synthetic.channels = 3;
    c.data.synthetic.height = c.data.synthetic.width = 32;
    c.model.preset = Preset::convnet;
    c.model.net_width = 32;
    c.model.block_depth = 4;
  }
  c.training.log_every = 50;
  c.training.precision = precision;
  c.training.output_network = OutputNetwork::last;
  c.device = DeviceSpec{DeviceKind::cuda, 0, 0};
  if (gpus > 1)
    for (int g = 0; g < gpus; ++g) c.replicas.push_back({DeviceKind::cuda, g, 0});
  return c;
}

struct ReportClock : TrainCallback {
  bool started = false;
  Clock::time_point t0, t1;
  std::int64_t start_iteration = 0, end_iteration = 0;
  bool on_iteration(const IterationInfo& i) override {
    if (!started && i.iteration == i.iterations_per_epoch) {
      started = true;
      t0 = Clock::now();
      start_iteration = i.iteration;
    }
    if (started && i.has_loss) {
      t1 = Clock::now();
      end_iteration = i.iteration;
    }
    return true;
  }
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"data-parallel throughput of train() on 1 and 2 GPUs"};
  std::vector<std::string> models = {"lenet", "convnet"};
  std::vector<int> batches = {256, 1024}, gpu_counts = {1, 2};
  std::string precision = "fp32";
  int epochs = 4, rows = 65536;
  app.add_option("--models", models, "lenet, convnet");
  app.add_option("--batches", batches, "global batch sizes");
  app.add_option("--gpus", gpu_counts, "GPU counts");
  app.add_option("--precision", precision, "fp32, tf32 or bf16");
  app.add_option("--epochs", epochs, "epochs per run (the first is not timed)");
  app.add_option("--rows", rows, "training images (synthetic)");
  CLI11_PARSE(app, argc, argv);
  try {
    const auto chosen = parse_word<Precision>(precision);
    if (!chosen) throw sweep::Error("--precision: not one of " + words_text<Precision>());
    for (const std::string& model : models)
      for (int batch : batches)
        for (int gpus : gpu_counts) {
          if (gpus > cuda_device_count()) {
            std::printf("skip %s batch %d on %d GPUs: %d visible\n", model.c_str(), batch, gpus,
                        cuda_device_count());
            continue;
          }
          ReportClock clock;
          const TrainResult r = train(config(model, batch, gpus, *chosen, epochs, rows), clock);
          if (r.state != RunState::completed) throw sweep::Error("train(): " + r.message);
          // Every timed iteration is a full batch except each epoch's last (kRows % batch).
          const std::int64_t ipe = (rows + batch - 1) / batch, partial = rows % batch;
          const std::int64_t iters = clock.end_iteration - clock.start_iteration;
          const std::int64_t epochs_timed = iters / ipe;
          const std::int64_t images =
              iters * batch - (partial ? epochs_timed * (batch - partial) : 0);
          const double rate =
              double(images) / std::chrono::duration<double>(clock.t1 - clock.t0).count();
          std::printf("%s on %s\n", model.c_str(), r.device.c_str());
          std::printf(
              "RESULT peer=sweep model=%s gpus=%d batch=%d precision=%s images_per_second=%.0f "
              "final_train_loss=%.4f\n",
              model.c_str(), gpus, batch, precision.c_str(), rate, r.final_train_loss);
          std::fflush(stdout);
        }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_data_parallel: %s\n", e.what());
    return 1;
  }
  return 0;
}
