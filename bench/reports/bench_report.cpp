/*
 * bench_report.cpp — how long the HTML report of a large sweep takes, and how big it is.
 *
 *   bench_report [DIR] [--trials-per-axis N] [--epochs E]
 *
 * Builds a synthetic sweep of 10 learning rates x 10 batch sizes x 10 momenta = 1,000 trials of
 * 100 epochs (val_accuracy and val_loss per epoch, train_loss 5x per epoch: 700,000 metric
 * points), writes it into a real store in DIR (default: the system temp directory), then times
 *   render      render_report() from memory (analysis + JSON + HTML),
 *   load        load_report_data() from the store (3 queries; metrics in one pass),
 *   load+write  write_report(): load + render + the atomic file write, the CLI's path.
 * The decision: wall and CPU seconds are both printed, because on a shared 2-core machine the
 * wall clock also measures the neighbours; goals are < 2 s for load+write and < 5 MB.
 */
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "reports/report.h"
#include "store/store.h"
#include "tests/reports/synthetic_store.h"
#include "tests/reports/synthetic_sweep.h"

namespace {

using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;

double cpu_seconds() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

struct Measured {
  double wall = 0, cpu = 0;
};

template <typename Fn>
Measured measure(Fn&& fn) {
  const auto wall0 = Clock::now();
  const double cpu0 = cpu_seconds();
  fn();
  return {std::chrono::duration<double>(Clock::now() - wall0).count(), cpu_seconds() - cpu0};
}

std::vector<double> spread(double lo, double hi, int n, bool log_scale) {
  std::vector<double> v;
  for (int i = 0; i < n; ++i) {
    const double t = n == 1 ? 0.5 : static_cast<double>(i) / (n - 1);
    v.push_back(log_scale ? lo * std::pow(hi / lo, t) : lo + (hi - lo) * t);
  }
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  fs::path dir = fs::temp_directory_path();
  int per_axis = 10, epochs = 100;
  for (int a = 1; a < argc; ++a) {
    const std::string arg = argv[a];
    if (arg == "--trials-per-axis" && a + 1 < argc)
      per_axis = std::atoi(argv[++a]);
    else if (arg == "--epochs" && a + 1 < argc)
      epochs = std::atoi(argv[++a]);
    else
      dir = arg;
  }
  const fs::path work = dir / ("sweep-bench-report-" + std::to_string(::getpid()));
  fs::create_directories(work);

  sweep::reports::testing::SyntheticSweepOptions options;
  options.name = "bench-1000";
  options.learning_rates = spread(1e-4, 1e-1, per_axis, true);
  std::vector<int> batch_sizes;
  for (double bs : spread(16, 512, per_axis, true)) batch_sizes.push_back(static_cast<int>(bs));
  options.batch_sizes = batch_sizes;
  options.momenta = spread(0.5, 0.99, per_axis, false);
  options.epochs = epochs;
  options.loss_points_per_epoch = 5;
  const sweep::reports::ReportData data = sweep::reports::testing::make_synthetic_sweep(options);
  std::size_t points = 0;
  for (const auto& t : data.trials)
    for (const auto& [name, series] : t.series) points += series.size();

  std::string html;
  const Measured render = measure([&] { html = sweep::reports::render_report(data); });
  const std::size_t memory_bytes = html.size();

  const Measured fill = measure([&] {
    sweep::Store store(work / "sweep.db");
    sweep::reports::testing::store_sweep(store, data);
  });

  sweep::Store store(work / "sweep.db", {.read_only = true});
  sweep::reports::ReportData loaded;
  const Measured load =
      measure([&] { loaded = sweep::reports::load_report_data(store, options.name); });
  const fs::path out = work / "report.html";
  const Measured write =
      measure([&] { sweep::reports::write_report(store, options.name, out.string()); });
  const auto file_bytes = fs::file_size(out);

  std::printf("report of %zu trials x %d epochs (%zu metric points)\n", data.trials.size(), epochs,
              points);
  std::printf("  %-34s %8s %8s\n", "step", "wall s", "cpu s");
  std::printf("  %-34s %8.3f %8.3f\n", "render (from memory)", render.wall, render.cpu);
  std::printf("  %-34s %8.3f %8.3f\n", "load_report_data (from the store)", load.wall, load.cpu);
  std::printf("  %-34s %8.3f %8.3f   goal < 2 s\n", "write_report (load+render+write)", write.wall,
              write.cpu);
  std::printf("  %-34s %8.3f %8.3f   (setup, not the report)\n", "filling the store", fill.wall,
              fill.cpu);
  std::printf("  HTML size: %.2f MB (%zu bytes; ECharts is ~1.0 MB of it)   goal < 5 MB\n",
              static_cast<double>(file_bytes) / (1024.0 * 1024.0),
              static_cast<std::size_t>(file_bytes));
  std::printf("  report kept at %s\n", out.c_str());
  std::printf("RESULT report_render_s=%.3f\n", render.wall);
  std::printf("RESULT report_load_s=%.3f\n", load.wall);
  std::printf("RESULT report_load_render_write_s=%.3f\n", write.wall);
  std::printf("RESULT report_bytes=%zu\n", static_cast<std::size_t>(file_bytes));
  std::printf("RESULT report_bytes_from_memory=%zu\n", memory_bytes);
  fs::remove(work / "sweep.db");
  fs::remove(work / "sweep.db-wal");
  fs::remove(work / "sweep.db-shm");
  return write.wall < 2.0 && file_bytes < 5u * 1024 * 1024 ? 0 : 1;
}
