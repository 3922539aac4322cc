/*
 * hyperband.h — `early_terminate: {type: hyperband, min_iter, eta}` with W&B's semantics.
 *
 * W&B's hyperband stopping (wandb/sweeps, stop_runs_hyperband) is not a bracketed Hyperband but a
 * re-evaluated successive-halving test: bands at min_iter * eta^k (or max_iter / eta^i, i = 1..s);
 * each band's threshold is the value at position floor(n / eta) of the n trials' values at that
 * band sorted best first; at every report, a running trial whose BEST value so far is strictly
 * worse than the threshold of the highest band it has passed is stopped. Thresholds tighten as
 * more trials pass a band, so unlike ASHA a trial can be stopped at a later report of the same
 * band. `strict: true` (W&B's key) compares the trial's value AT the band (its first report at an
epoch >= the band) instead of its best so far, so a trial that was good once and has fallen back is
stopped; sweep's default is false (the best so far), W&B's is true. One deliberate difference: W&B
counts bands in logged values from 0 (band 3 = the 4th
 * value logged); we count in epochs (band 3 = epoch 3), so `min_iter: 3` means "after 3 epochs".
 */
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "scheduler/stopping/stopping_policy.h"

namespace sweep::scheduler {

struct HyperbandOptions {
  std::string metric;
  MetricGoal goal = MetricGoal::maximize;
  std::vector<std::int64_t> bands;  // ascending epochs; see hyperband_bands()
  int eta = 3;
  bool strict = false;  // compare the value at the band, not the best so far
};

// W&B's two forms: min_iter * eta^k up to max_epochs_cap, or max_iter / eta^i for i = 1..s.
std::vector<std::int64_t> hyperband_bands_from_min_iter(std::int64_t min_iter, int eta,
                                                        std::int64_t max_epochs_cap = 1'000'000);
std::vector<std::int64_t> hyperband_bands_from_max_iter(std::int64_t max_iter, int eta, int s);

class HyperbandRule final : public StoppingPolicy {
 public:
  explicit HyperbandRule(HyperbandOptions options);
  StopDecision observe(std::int64_t trial_id, const MetricPoint& point) override;
  std::string describe() const override;

 private:
  struct TrialHistory {
    std::map<std::int64_t, double> by_epoch;  // last value per epoch
    double best = 0;
    bool has_best = false;
  };
  HyperbandOptions options_;
  std::mutex mutex_;
  std::unordered_map<std::int64_t, TrialHistory> trials_;
};

}  // namespace sweep::scheduler
