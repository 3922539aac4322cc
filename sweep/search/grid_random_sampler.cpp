/*
 * grid_random_sampler.cpp — trial_point, one number at a time.
 */
#include "sweep/search/grid_random_sampler.h"

namespace sweep::search {

GridRandomSampler::GridRandomSampler(config::SweepConfig config)
    : config_(std::move(config)), capacity_(config_.trial_count()) {}

std::optional<config::TrialPoint> GridRandomSampler::ask() {
  if (numbers_.peek() >= capacity_) return std::nullopt;
  return config::trial_point(config_, numbers_.next());
}

void GridRandomSampler::tell(std::uint64_t /*number*/, const TrialResult& /*result*/) {}

void GridRandomSampler::restore(const config::TrialPoint& point,
                                const std::optional<TrialResult>& /*result*/) {
  numbers_.take(static_cast<std::uint64_t>(point.number));
}

}  // namespace sweep::search
