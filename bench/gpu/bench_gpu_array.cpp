/*
 * bench_gpu_array.cpp — fused arrays on one GPU: summed training images/s of K LeNets trained
 * as one array (trainer/array/train_array.h) against K, and the lone trial for reference.
 *
 * Members differ as a sweep's would (learning rate, momentum, seed), each with its own batches.
 * Timed as bench_gpu_train times one trial: between two points where the loop itself waits for
 * the GPU, here the last member's epoch-end read (by then every member's epoch-end read is done:
 * members are read in order each round), from the end of epoch 1 to the end of the last epoch.
 * Data loading, building the members, the first epoch's one-time costs (the eager first steps,
 * the graph recordings) and the final evaluations are outside the figure; no validation runs
 * unless --validation test (then the first epoch's, overlapped across members, is inside it).
 *
 *   bench_gpu_array --data DIR [--k 1 2 4 8 16 32 64] [--batch 64] [--epochs 3]
 *                   [--precision fp32|tf32|bf16] [--validation none|test] [--overlap on|off]
 *                   [--profile-epoch]
 * --profile-epoch brackets the largest K's second epoch with cudaProfilerStart / Stop, so that
 * Nsight Compute measures the members' kernels as they run side by side, as one workload (ncu
 * --replay-mode app-range; range replay takes no --profile-from-start): what the SMs' pipes do in
 * the array's mix, which a per-kernel profile (serialised) cannot show.
 * Prints `RESULT peer=sweep-array k=.. batch=.. images_per_second=.. per_member=.. setup_seconds=..
 * end_seconds=..` lines: setup is from the call to the last member's first step (data loading,
 * building the members, their first steps' one-time costs), end from the last epoch's end to the
 * return (the final evaluations).
 */
#include <cuda_profiler_api.h>
#include <cuda_runtime.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "common/check.h"
#include "common/words.h"
#include "tests/trainer/lenet_config.h"
#include "trainer/array/train_array.h"

namespace {

using namespace sweep::trainer;
using Clock = std::chrono::steady_clock;

bool g_overlap = true;   // --overlap: DeviceSpec::overlap of every member
bool g_profile = false;  // --profile-epoch

TrainConfig member_config(const std::string& data, int batch, int epochs, Precision precision,
                          Validation validation, int i) {
  TrainConfig c = test::fashion_mnist_lenet(data, batch, epochs);
  c.data.validation = validation;
  c.training.learning_rate = 0.001 * (1 + i % 8);  // members differ in rate and momentum
  c.training.momentum = i % 2 ? 0.9 : 0.8;
  c.training.seed = 1 + i;
  c.training.output_network = OutputNetwork::last;
  c.training.precision = precision;
  c.device = DeviceSpec{DeviceKind::cuda, 0, 0};
  c.device.overlap = g_overlap;
  return c;
}

// Notes the time of its member's first step and of the epoch ends it sees (the last member's are
// the timing points).
struct EpochClock : TrainCallback {
  std::optional<Clock::time_point> first_step;
  std::vector<Clock::time_point> epoch_ends;
  bool profiles = false;  // brackets the second epoch for the profiler (the last member's clock)
  bool on_iteration(const IterationInfo& i) override {
    if (!first_step) first_step = Clock::now();
    if (i.iteration % i.iterations_per_epoch == 0) {
      epoch_ends.push_back(Clock::now());
      if (profiles && epoch_ends.size() == 1) SWEEP_CHECK_CUDA(cudaProfilerStart());
      if (profiles && epoch_ends.size() == 2) SWEEP_CHECK_CUDA(cudaProfilerStop());
    }
    return true;
  }
};

struct ArrayTimes {
  double images_per_second;  // summed, epochs 2..N
  double setup_seconds;      // from train_array's call to the last member's first step
  double end_seconds;        // from the last epoch end to train_array's return
};

ArrayTimes run_array(const std::string& data, int k, int batch, int epochs, Precision precision,
                     Validation validation, bool profile = false) {
  std::vector<EpochClock> clocks(k);
  clocks.back().profiles = profile;
  std::vector<ArrayMember> members(k);
  for (int i = 0; i < k; ++i) {
    members[i].config = member_config(data, batch, epochs, precision, validation, i);
    members[i].callback = &clocks[i];
  }
  std::int64_t images_per_epoch = 0;
  int failed = 0;
  const Clock::time_point called = Clock::now();
  train_array(members, [&](std::size_t, MemberEnd end) {
    if (end.error) {
      ++failed;
      try {
        std::rethrow_exception(end.error);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "member failed: %s\n", e.what());
      }
    } else {
      images_per_epoch = end.result.iterations > 0 ? 60000 : 0;
    }
  });
  const Clock::time_point returned = Clock::now();
  if (failed) throw sweep::Error(std::to_string(failed) + " members failed");
  const std::vector<Clock::time_point>& ends = clocks.back().epoch_ends;
  if (ends.size() < 2) throw sweep::Error("too few epochs to time");
  Clock::time_point last_first = called;
  for (const EpochClock& c : clocks)
    last_first = std::max(last_first, c.first_step.value_or(called));
  auto seconds = [](Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double>(b - a).count();
  };
  return {double(k) * double(images_per_epoch) * double(ends.size() - 1) /
              seconds(ends.front(), ends.back()),
          seconds(called, last_first), seconds(ends.back(), returned)};
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Summed training throughput of fused arrays of K LeNets on one GPU"};
  std::string data;
  std::vector<int> ks = {1, 2, 4, 8, 16, 32, 64};
  int batch = 64, epochs = 3;
  app.add_option("--data", data, "Fashion-MNIST directory")->required();
  app.add_option("--k", ks, "array sizes");
  app.add_option("--batch", batch, "batch size");
  app.add_option("--epochs", epochs, "epochs (timed: 2..N)")->check(CLI::Range(2, 100));
  std::string precision_word = "fp32";
  app.add_option("--precision", precision_word, "fp32, tf32 or bf16")
      ->check(CLI::IsMember(sweep::word_list<Precision>()));
  std::string validation_word = "none";
  app.add_option("--validation", validation_word,
                 "none, or test: the test set validated after each epoch, as a sweep does")
      ->check(CLI::IsMember({"none", "test"}));
  std::string overlap_word = "on";
  app.add_option("--overlap", overlap_word,
                 "on: each member's weight gradients on a second stream (DeviceSpec::overlap); off")
      ->check(CLI::IsMember({"on", "off"}));
  app.add_flag("--profile-epoch", g_profile,
               "cudaProfilerStart / Stop around the largest K's second epoch (for ncu's range "
               "replay)");
  CLI11_PARSE(app, argc, argv);
  g_overlap = overlap_word == "on";
  const std::optional<Precision> precision = sweep::parse_word<Precision>(precision_word);
  const Validation validation = validation_word == "test" ? Validation::test : Validation::none;
  try {
    // Load the libraries' kernels once, as a sweep process does.
    run_array(data, 1, batch, 2, *precision, validation);
    for (int k : ks) {
      const ArrayTimes t = run_array(data, k, batch, epochs, *precision, validation,
                                     g_profile && k == *std::max_element(ks.begin(), ks.end()));
      const double ips = t.images_per_second;
      std::printf(
          "RESULT peer=sweep-array k=%d batch=%d precision=%s images_per_second=%.0f "
          "per_member=%.0f setup_seconds=%.3f end_seconds=%.3f\n",
          k, batch, precision_word.c_str(), ips, ips / k, t.setup_seconds, t.end_seconds);
      std::fflush(stdout);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_gpu_array: %s\n", e.what());
    return 1;
  }
  return 0;
}
