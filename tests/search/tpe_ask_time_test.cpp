// How long one ask takes with 1,000 finished trials (the goal is < 5 ms). Printed, not asserted:
// a timing assertion would fail on a loaded machine, not on a slow sampler.
#include <algorithm>
#include <chrono>
#include <cmath>

#include "search_test_util.h"

namespace sweep::search::testing {
namespace {

struct Timing {
  double median_ms = 0, max_ms = 0;
};

// Restores `finished` told trials of random search over `parameters`, then times `asks` asks,
// each told before the next (and, with `pending`, that many asked and never told first).
Timing time_asks(const std::string& parameters, int finished, int asks, int pending) {
  const config::SweepConfig random =
      load_sweep("  method: random\n  max_trials: " + std::to_string(finished) +
                 "\n  parameters:\n" + parameters);
  TpeSampler tpe(random.sweep.space, {}, false, 0,
                 static_cast<std::uint64_t>(finished + asks + pending));
  auto objective = [](const sweep::Json& params) {
    double sum = 0;
    for (const auto& [name, value] : params.items())
      sum += value.is_number() ? std::sin(value.get<double>()) : value.dump().size();
    return sum;
  };
  for (int i = 0; i < finished; ++i) {
    const config::TrialPoint point = config::trial_point(random, static_cast<std::uint64_t>(i));
    tpe.restore(point, TrialResult{TrialOutcome::complete, objective(point.params), 1});
  }
  for (int i = 0; i < pending; ++i) EXPECT_TRUE(tpe.ask());
  std::vector<double> ms;
  for (int i = 0; i < asks; ++i) {
    const auto start = std::chrono::steady_clock::now();
    const std::optional<config::TrialPoint> point = tpe.ask();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                     .count());
    EXPECT_TRUE(point);
    if (point)
      tpe.tell(static_cast<std::uint64_t>(point->number),
               {TrialOutcome::complete, objective(point->params), 1});
  }
  std::sort(ms.begin(), ms.end());
  return {ms[ms.size() / 2], ms.back()};
}

const std::string kMixedSix =
    "    x: {distribution: uniform, min: -5, max: 5}\n"
    "    lr: {distribution: log_uniform_values, min: 1e-6, max: 1}\n"
    "    batch: {distribution: int_uniform, min: 8, max: 512}\n"
    "    dropout: {distribution: q_uniform, min: 0, max: 0.8, q: 0.05}\n"
    "    act: {values: [relu, tanh, gelu, silu]}\n"
    "    shift: {distribution: normal, mu: 0, sigma: 2}\n";

TEST(TpeAskTime, PrintsTheTimeOfOneAskWithAThousandFinishedTrials) {
  const Timing one_d = time_asks("    x: {distribution: uniform, min: -5, max: 5}\n", 1000, 50, 0);
  const Timing six_d = time_asks(kMixedSix, 1000, 50, 0);
  const Timing six_d_pending = time_asks(kMixedSix, 1000, 50, 8);
  std::printf("tpe ask with 1,000 finished trials: 1 uniform: median %.3f ms, max %.3f ms\n",
              one_d.median_ms, one_d.max_ms);
  std::printf("tpe ask with 1,000 finished trials: 6 mixed (2 grid): median %.3f ms, max %.3f ms\n",
              six_d.median_ms, six_d.max_ms);
  std::printf("the same with 8 pending: median %.3f ms, max %.3f ms\n", six_d_pending.median_ms,
              six_d_pending.max_ms);
  RecordProperty("ask_ms_1000_trials_6d_median", std::to_string(six_d.median_ms));
}

}  // namespace
}  // namespace sweep::search::testing
