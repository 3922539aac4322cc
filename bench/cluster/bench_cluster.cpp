/*
 * bench_cluster.cpp — what running over MPI ranks costs, against the local executor in the same
 * call, both writing to the SQLite store through the StoreSink as `sweep run` does.
 *
 *   trials:  N trivial trials (each reports two metrics and returns) through every rank's one CPU
 *            slot (rank 0's too) vs a local executor with as many CPU slots. Goal: ≤ 1.5× local.
 *   metrics: each host rank (rank 0 coordinates only) runs one trial reporting P points as fast
 *            as it can; points/s arriving in rank 0's store vs the same trials run locally.
 *            Goal: ≥ 200,000 points/s.
 * Prints a table and `RESULT key=value` lines (rank 0).
 *
 *   mpirun -np 4 bench_cluster --trials 10000 --points 300000
 */
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>

#include "cluster/coordinator.h"
#include "cluster/host.h"
#include "cluster/mpi_transport.h"
#include "common/check.h"
#include "scheduler/scheduler.h"
#include "store/store.h"
#include "sweep/run/store_sink.h"

namespace {

namespace fs = std::filesystem;
using namespace sweep::scheduler;
using Clock = std::chrono::steady_clock;

TrialOutcome trivial(TrialContext& ctx) {
  ctx.report("loss", 0.5, 1, 1);
  ctx.report("val_accuracy", 0.9, 1, 1);
  return {};
}

TrialFn points_trial(std::int64_t points) {
  return [points](TrialContext& ctx) {
    MetricPoint p;
    p.name = "loss";
    for (std::int64_t i = 1; i <= points; ++i) {
      p.step = i;
      p.value = 1.0 / static_cast<double>(i);
      p.wall_time = 1.0;  // no clock read per point: the benchmark is the path, not the clock
      ctx.report(p);
    }
    return TrialOutcome{};
  };
}

sweep::cluster::RemoteTrial remote(std::string kind, sweep::Json payload = sweep::Json::object()) {
  sweep::cluster::RemoteTrial trial;
  trial.kind = std::move(kind);
  trial.payload = std::move(payload);
  return trial;  // no trial directory: nothing travels
}

sweep::cluster::TrialFactories factories() {
  return {
      {"bench.trivial", [](const sweep::cluster::RemoteTrialInput&) { return TrialFn(trivial); }},
      {"bench.points", [](const sweep::cluster::RemoteTrialInput& in) {
         return points_trial(in.payload.at("points").get<std::int64_t>());
       }}};
}

// A fresh store with `trials` trial rows, and its sink.
struct Stored {
  fs::path dir;
  std::unique_ptr<sweep::Store> store;
  std::shared_ptr<sweep::run::StoreSink> sink;
  std::vector<std::int64_t> ids;

  Stored(const std::string& name, int trials) {
    dir = fs::temp_directory_path() / ("bench_cluster_" + name + "_" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    store = std::make_unique<sweep::Store>(dir / "sweep.db");
    const std::int64_t sweep_id =
        store->create_sweep({.name = name, .metric_name = "val_accuracy"});
    std::vector<sweep::TrialSpec> specs(static_cast<std::size_t>(trials));
    for (int i = 0; i < trials; ++i) specs[static_cast<std::size_t>(i)].number = i;
    ids = store->add_trials(sweep_id, specs);
    std::map<std::int64_t, sweep::run::TrialPaths> paths;
    for (std::int64_t id : ids) {
      paths[id].trial_dir = (dir / "trials").string();
      paths[id].write_log = false;
    }
    sink = std::make_shared<sweep::run::StoreSink>(*store, sweep_id, dir, std::move(paths));
  }
  ~Stored() {
    sink.reset();
    store.reset();
    fs::remove_all(dir);
  }
};

// Runs `fns` on `devices` with the store sink; seconds from the first submit to all durable.
double run_all(const std::vector<Device>& devices, int cpu_slots, Stored& stored,
               const std::function<TrialFn(std::size_t)>& fn_of,
               sweep::cluster::Coordinator* coordinator) {
  ExecutorOptions options;
  options.devices = devices;
  options.cpu_slots = cpu_slots;
  if (coordinator) coordinator->open(devices, cpu_slots, 1);
  const auto start = Clock::now();
  {
    Executor executor(options, {stored.sink});
    std::vector<TrialFuture> futures;
    for (std::size_t i = 0; i < stored.ids.size(); ++i) {
      TrialSpec spec;
      spec.id = stored.ids[i];
      spec.number = static_cast<std::int64_t>(i);
      futures.push_back(executor.submit(spec, fn_of(i)));
    }
    for (auto& f : futures)
      if (f.outcome().state != sweep::TrialState::completed)
        throw sweep::Error("a benchmark trial ended " +
                           std::string(sweep::to_string(f.outcome().state)) + ": " +
                           f.outcome().message);
    stored.sink->flush();
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  if (coordinator) coordinator->close();
  return seconds;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Sweeps over MPI ranks: trial overhead and metric throughput vs the local executor"};
  int trials = 10000;
  std::int64_t points = 300000;
  app.add_option("--trials", trials, "trivial trials (trials benchmark)");
  app.add_option("--points", points, "points per host trial (metrics benchmark)");
  app.allow_extras();
  try {
    sweep::cluster::MpiSession session(argc, argv);
    CLI11_PARSE(app, argc, argv);
    if (session.size() < 2) throw sweep::Error("start it with mpirun -np 2 or more");
    sweep::cluster::MpiTransport transport(session);
    sweep::cluster::ClusterOptions options;
    if (session.rank() != 0) return sweep::cluster::serve(transport, {}, factories(), options);
    sweep::cluster::Coordinator coordinator(transport, options);
    const int ranks = session.size(), hosts = ranks - 1;

    // 1. Trivial trials: every rank one CPU slot vs a local executor with `ranks` slots.
    std::vector<Device> everywhere;
    for (int r = 0; r < ranks; ++r) everywhere.push_back(Device::cpu().on_rank(r));
    double cluster_s = 0, local_s = 0;
    {
      Stored stored("trials_mpi", trials);
      cluster_s = run_all(
          everywhere, 1, stored,
          [&](std::size_t) {
            return coordinator.place(trivial, [] { return remote("bench.trivial"); });
          },
          &coordinator);
    }
    {
      Stored stored("trials_local", trials);
      local_s = run_all(
          {Device::cpu()}, ranks, stored, [](std::size_t) { return TrialFn(trivial); }, nullptr);
    }
    // 2. Metric points: one trial per host rank, rank 0 coordinates only.
    std::vector<Device> hosts_only;
    for (int r = 1; r < ranks; ++r) hosts_only.push_back(Device::cpu().on_rank(r));
    double points_mpi_s = 0, points_local_s = 0;
    {
      Stored stored("points_mpi", hosts);
      points_mpi_s = run_all(
          hosts_only, 1, stored,
          [&](std::size_t) {
            return coordinator.place(points_trial(points), [&] {
              return remote("bench.points", {{"points", points}});
            });
          },
          &coordinator);
    }
    {
      Stored stored("points_local", hosts);
      points_local_s = run_all(
          {Device::cpu()}, hosts, stored, [&](std::size_t) { return points_trial(points); },
          nullptr);
    }
    const double total_points = static_cast<double>(points) * hosts;
    std::printf("%-48s %12s %12s %8s\n", "", "mpi", "local", "ratio");
    std::printf(
        "%-48s %12.3f %12.3f %8.2f\n",
        (std::to_string(trials) + " trivial trials, " + std::to_string(ranks) + " slots (s)")
            .c_str(),
        cluster_s, local_s, cluster_s / local_s);
    std::printf("%-48s %12.0f %12.0f %8.2f\n",
                (std::to_string(hosts) + " trials x " + std::to_string(points) +
                 " points into the store (points/s)")
                    .c_str(),
                total_points / points_mpi_s, total_points / points_local_s,
                points_local_s / points_mpi_s);
    std::printf("RESULT trials=%d ranks=%d mpi_s=%.3f local_s=%.3f ratio=%.3f\n", trials, ranks,
                cluster_s, local_s, cluster_s / local_s);
    std::printf("RESULT points=%.0f hosts=%d mpi_points_per_s=%.0f local_points_per_s=%.0f\n",
                total_points, hosts, total_points / points_mpi_s, total_points / points_local_s);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_cluster: %s\n", e.what());
    return 1;
  }
}
