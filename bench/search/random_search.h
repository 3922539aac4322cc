/*
 * random_search.h — random search behind the Sampler interface, for the benchmark's run loop:
 * trial k is config::sample_point(space, seed, k), the draw `method: random` makes for trial k.
 * What it is told changes nothing.
 */
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>

#include "sweep/config/search_space.h"
#include "sweep/search/sampler.h"

namespace sweep::bench {

class RandomSearch : public search::Sampler {
 public:
  RandomSearch(const config::SearchSpace& space, std::uint64_t seed, std::uint64_t max_trials)
      : space_(space), seed_(seed), max_trials_(max_trials) {}

  std::optional<config::TrialPoint> ask() override {
    if (next_ >= max_trials_) return std::nullopt;
    config::TrialPoint point;
    point.number = static_cast<int>(next_);
    point.seed = seed_;
    point.params = Json::object();
    const auto draws = config::sample_point(space_, seed_, next_);
    for (std::size_t p = 0; p < draws.size(); ++p)
      point.params[space_.params[p].name] = draws[p].value;
    ++next_;
    return point;
  }
  void tell(std::uint64_t, const search::TrialResult&) override {}
  void restore(const config::TrialPoint& point,
               const std::optional<search::TrialResult>&) override {
    next_ = std::max(next_, static_cast<std::uint64_t>(point.number) + 1);
  }
  std::uint64_t capacity() const override { return max_trials_; }

 private:
  const config::SearchSpace& space_;
  std::uint64_t seed_;
  std::uint64_t max_trials_;
  std::uint64_t next_ = 0;
};

}  // namespace sweep::bench
