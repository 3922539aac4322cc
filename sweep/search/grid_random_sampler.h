/*
 * grid_random_sampler.h — grid and random search as a Sampler: exactly the trials
 * config::trial_point gives (same numbers, order, values and seeds, repeats included). They
 * learn nothing, so tell() is ignored.
 */
#pragma once

#include "sweep/search/sampler.h"
#include "sweep/search/trial_numbers.h"

namespace sweep::search {

class GridRandomSampler final : public Sampler {
 public:
  // config.sweep.method is grid or random; the config is copied (the sampler may outlive it).
  explicit GridRandomSampler(config::SweepConfig config);

  // trial_point(config, n) for the lowest number n never restored nor asked, while n < capacity.
  std::optional<config::TrialPoint> ask() override;
  void tell(std::uint64_t number, const TrialResult& result) override;
  // Marks point.number as used: an earlier run has it (the run loop re-runs it when unfinished).
  void restore(const config::TrialPoint& point, const std::optional<TrialResult>& result) override;
  std::uint64_t capacity() const override { return capacity_; }

 private:
  config::SweepConfig config_;
  std::uint64_t capacity_ = 0;
  TrialNumbers numbers_;
};

}  // namespace sweep::search
