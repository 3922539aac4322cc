/*
 * bench_search.cpp — sweep's search methods on the objectives of objectives.h: sweep's TPE
 * against random search, for the comparison with Optuna's TPE (optuna_search.py, compare.py,
 * run.sh next to this file).
 *
 * runs (default): for each objective × seed × budget × batch size × method, one JSON line:
 *   objective, method (sweep-tpe | sweep-random), seed, budget, batch, best (the lowest value
 *   told), best_clean (the noise-free value of that trial), duplicates (whether two suggestions
 *   pending at once — one batch — were equal), seconds.
 * A batch of 8 is: ask 8 (all pending), evaluate, tell 8; the last batch is what remains of the
 * budget. TPE is TpeSampler with TpeOptions{} (Optuna 3.1's defaults: univariate, width-weighted
 * kernels), minimising, seeded with the run's seed, max_trials = the budget; random search is
 * config::sample_point(space, seed, k), exactly the trials `method: random` runs.
 * Diagnostics (not run by default): `--methods tpe-univariate tpe-multivariate` force that
 * kernel mode; `--set field=value` changes a TpeOptions field of every tpe method (e.g.
 * width_weighted_density=false: the true density), `--suffix S` names them sweep-tpe[-MODE]-S;
 * `--first-seed F` runs seeds F .. F+N-1 (a fresh set to confirm a result).
 * --timing: one ask() with --history finished trials (TpeOptions{} with --set applied) (random
 * points told their objective values through restore()), on sphere5 and mixed: --asks asks, each
 * told its value untimed; median and 90th percentile in ms, one JSON line per space.
 * --check: objective values at fixed random points, for `optuna_search.py check`.
 *
 *   bench_search --seeds 30 --budgets 50 100 --batches 1 8 > sweep.jsonl
 *   bench_search --timing
 */
#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "bench/search/objectives.h"
#include "bench/search/random_search.h"
#include "sweep/search/sampler.h"
#include "sweep/search/tpe_sampler.h"

namespace {

using namespace sweep;
using Clock = std::chrono::steady_clock;

// TpeOptions{} with `--set name=value` applied (booleans: true/false/1/0; numbers).
search::TpeOptions tpe_options(const std::vector<std::string>& settings) {
  search::TpeOptions options;
  for (const std::string& setting : settings) {
    const auto eq = setting.find('=');
    if (eq == std::string::npos)
      throw std::runtime_error("--set " + setting + ": expected name=value");
    const std::string name = setting.substr(0, eq), value = setting.substr(eq + 1);
    const auto flag = [&](bool& field) {
      if (value != "true" && value != "false" && value != "1" && value != "0")
        throw std::runtime_error("--set " + setting + ": expected true or false");
      field = value == "true" || value == "1";
    };
    if (name == "multivariate")
      flag(options.multivariate);
    else if (name == "width_weighted_density")
      flag(options.width_weighted_density);
    else if (name == "constant_liar")
      flag(options.constant_liar);
    else if (name == "consider_magic_clip")
      flag(options.consider_magic_clip);
    else if (name == "consider_endpoints")
      flag(options.consider_endpoints);
    else if (name == "n_startup_trials")
      options.n_startup_trials = std::stoi(value);
    else if (name == "n_ei_candidates")
      options.n_ei_candidates = std::stoi(value);
    else if (name == "prior_weight")
      options.prior_weight = std::stod(value);
    else if (name == "gamma_fraction")
      options.gamma_fraction = std::stod(value);
    else if (name == "gamma_cap")
      options.gamma_cap = std::stoi(value);
    else
      throw std::runtime_error("--set " + setting + ": no TpeOptions field " + name);
  }
  return options;
}

std::unique_ptr<search::Sampler> make_method(const std::string& method, const bench::Objective& o,
                                             std::uint64_t seed, std::uint64_t max_trials,
                                             const search::TpeOptions& tpe) {
  if (method == "random") return std::make_unique<bench::RandomSearch>(o.space, seed, max_trials);
  search::TpeOptions options = tpe;
  if (method == "tpe-univariate") options.multivariate = false;
  if (method == "tpe-multivariate") options.multivariate = true;
  return std::make_unique<search::TpeSampler>(o.space, options, /*maximize=*/false, seed,
                                              max_trials);
}

struct Task {
  const bench::Objective* objective;
  const search::TpeOptions* tpe;
  std::string label;  // the method's name in the output
  std::string method;
  std::uint64_t seed;
  std::uint64_t budget;
  std::uint64_t batch;
};

Json run_one(const Task& task) {
  const bench::Objective& o = *task.objective;
  const auto start = Clock::now();
  auto sampler = make_method(task.method, o, task.seed, task.budget, *task.tpe);
  double best = std::numeric_limits<double>::infinity();
  double best_clean = best;
  bool duplicates = false;
  std::uint64_t asked = 0;
  while (asked < task.budget) {
    std::vector<config::TrialPoint> pending;
    const std::uint64_t want = std::min(task.batch, task.budget - asked);
    while (pending.size() < want) {
      auto point = sampler->ask();
      if (!point) break;
      for (const config::TrialPoint& other : pending) duplicates |= other.params == point->params;
      pending.push_back(std::move(*point));
    }
    if (pending.empty()) break;  // the method ran out before the budget (it should not)
    asked += pending.size();
    for (const config::TrialPoint& point : pending) {
      const auto number = static_cast<std::uint64_t>(point.number);
      const double value = o.value(point.params, task.seed, number);
      if (value < best) {
        best = value;
        best_clean = o.clean(point.params);
      }
      sampler->tell(number, {search::TrialOutcome::complete, value, 1});
    }
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  Json line = Json::object();
  line["objective"] = o.name;
  line["method"] = task.label;
  line["seed"] = task.seed;
  line["budget"] = task.budget;
  line["batch"] = task.batch;
  line["asked"] = asked;
  line["best"] = best;
  line["best_clean"] = best_clean;
  line["duplicates"] = duplicates;
  line["seconds"] = std::round(seconds * 1e4) / 1e4;
  return line;
}

void print_line(const Json& line) { std::printf("%s\n", line.dump().c_str()); }

// Every task over `jobs` threads (each run has its own sampler and seed: the order does not
// change any result), longest budgets first so the threads finish together.
void runs(std::vector<Task> tasks, unsigned jobs) {
  std::stable_sort(tasks.begin(), tasks.end(),
                   [](const Task& a, const Task& b) { return a.budget > b.budget; });
  std::atomic<std::size_t> next{0};
  std::mutex out;
  const auto work = [&] {
    for (std::size_t i = next++; i < tasks.size(); i = next++) {
      const Json line = run_one(tasks[i]);
      std::lock_guard lock(out);
      print_line(line);
      std::fflush(stdout);
    }
  };
  std::vector<std::jthread> threads;
  for (unsigned t = 1; t < jobs; ++t) threads.emplace_back(work);
  work();
}

// restore() `history` random points told their values, then time `asks` asks.
void timing(const std::string& space_name, std::uint64_t history, int asks,
            const search::TpeOptions& options) {
  const bench::Objective& o = bench::objective(space_name);
  const std::uint64_t seed = 1;
  search::TpeSampler sampler(o.space, options, false, seed, history + asks);
  for (std::uint64_t k = 0; k < history; ++k) {
    config::TrialPoint point;
    point.number = static_cast<int>(k);
    point.params = Json::object();
    // Drawn from another seed than the sampler's: these are someone else's finished trials.
    const auto draws = config::sample_point(o.space, seed + 1000, k);
    for (std::size_t p = 0; p < draws.size(); ++p) {
      point.params[o.space.params[p].name] = draws[p].value;
    }
    const double value = o.value(point.params, seed, k);
    sampler.restore(point, search::TrialResult{search::TrialOutcome::complete, value, 1});
  }
  std::vector<double> ms;
  for (int i = 0; i < asks; ++i) {
    const auto start = Clock::now();
    auto point = sampler.ask();
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
    if (!point) throw std::runtime_error("timing: the sampler stopped asking");
    sampler.tell(static_cast<std::uint64_t>(point->number),
                 {search::TrialOutcome::complete,
                  o.value(point->params, seed, static_cast<std::uint64_t>(point->number)), 1});
  }
  std::sort(ms.begin(), ms.end());
  const std::size_t n = ms.size();
  Json line = Json::object();
  line["timing"] = "ask";
  line["method"] = "sweep-tpe";
  line["space"] = space_name;
  line["history"] = history;
  line["asks"] = asks;
  line["median_ms"] = n % 2 ? ms[n / 2] : (ms[n / 2 - 1] + ms[n / 2]) / 2;
  line["p90_ms"] = ms[static_cast<std::size_t>(0.9 * static_cast<double>(n - 1))];
  print_line(line);
}

// 20 random points per objective with their values (seed 7, trial numbers 0..19).
void check() {
  for (const bench::Objective& o : bench::objectives()) {
    for (std::uint64_t k = 0; k < 20; ++k) {
      Json params = Json::object();
      const auto draws = config::sample_point(o.space, 7, k);
      for (std::size_t p = 0; p < draws.size(); ++p)
        params[o.space.params[p].name] = draws[p].value;
      Json line = Json::object();
      line["objective"] = o.name;
      line["seed"] = 7;
      line["trial"] = k;
      line["params"] = params;
      line["value"] = o.value(params, 7, k);
      print_line(line);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"sweep's TPE and random search on the search benchmark's objectives"};
  std::vector<std::string> names;
  for (const auto& o : bench::objectives()) names.push_back(o.name);
  std::vector<std::string> methods = {"tpe", "random"};
  std::uint64_t seeds = 30;
  std::vector<std::uint64_t> budgets = {50, 100};
  std::vector<std::uint64_t> batches = {1, 8};
  unsigned jobs = std::max(1u, std::thread::hardware_concurrency());
  bool timing_mode = false, check_mode = false;
  std::uint64_t history = 1000;
  int asks = 50;
  app.add_option("--objectives", names, "objectives to run")->check(CLI::IsMember(names));
  std::uint64_t first_seed = 0;
  std::vector<std::string> settings;
  std::string suffix;
  app.add_option("--methods", methods, "tpe, random, tpe-univariate, tpe-multivariate")
      ->check(CLI::IsMember({"tpe", "random", "tpe-univariate", "tpe-multivariate"}));
  app.add_option("--first-seed", first_seed, "seeds FIRST .. FIRST+N-1 (a fresh set)");
  app.add_option("--set", settings, "TpeOptions field=value for the tpe methods (diagnostics)");
  app.add_option("--suffix", suffix, "appended to the tpe methods' names (sweep-tpe-SUFFIX)");
  app.add_option("--seeds", seeds, "seeds FIRST .. FIRST+N-1")->check(CLI::PositiveNumber);
  app.add_option("--budgets", budgets, "trials per run")->check(CLI::PositiveNumber);
  app.add_option("--batches", batches, "suggestions pending at once")->check(CLI::PositiveNumber);
  app.add_option("--jobs", jobs, "threads (runs in parallel)")->check(CLI::PositiveNumber);
  app.add_flag("--timing", timing_mode, "time one ask() with --history finished trials");
  app.add_option("--history", history, "finished trials before the timed asks");
  app.add_option("--asks", asks, "timed asks (median reported)")->check(CLI::PositiveNumber);
  app.add_flag("--check", check_mode, "print objective values at fixed points");
  CLI11_PARSE(app, argc, argv);

  try {
    if (check_mode) {
      check();
    } else if (timing_mode) {
      const search::TpeOptions tpe = tpe_options(settings);
      for (const char* space : {"sphere5", "mixed"}) timing(space, history, asks, tpe);
    } else {
      const search::TpeOptions tpe = tpe_options(settings);
      std::vector<Task> tasks;
      for (const std::string& name : names)
        for (std::uint64_t budget : budgets)
          for (std::uint64_t batch : batches)
            for (const std::string& method : methods)
              for (std::uint64_t seed = first_seed; seed < first_seed + seeds; ++seed)
                tasks.push_back(
                    {&bench::objective(name), &tpe,
                     "sweep-" + method + (method == "random" || suffix.empty() ? "" : "-" + suffix),
                     method, seed, budget, batch});
      runs(std::move(tasks), jobs);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_search: %s\n", e.what());
    return 1;
  }
  return 0;
}
