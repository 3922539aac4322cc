/*
 * sampler.cpp — make_sampler: the sampler of a config's sweep.method.
 */
#include "sweep/search/sampler.h"

#include "common/check.h"
#include "sweep/search/grid_random_sampler.h"
#include "sweep/search/tpe_sampler.h"

namespace sweep::search {

std::unique_ptr<Sampler> make_sampler(const config::SweepConfig& config) {
  const std::string& method = config.sweep.method;
  if (method == "grid" || method == "random") return std::make_unique<GridRandomSampler>(config);
  if (method == "tpe" || method == "bayes") {
    if (config.sweep.max_trials < 1) throw Error("make_sampler: tpe needs sweep.max_trials >= 1");
    TrialLayout layout;
    layout.repeats = config.sweep.repeats;
    layout.base_training_seed = config.base.training.seed;
    return std::make_unique<TpeSampler>(
        config.sweep.space, TpeOptions{}, config.sweep.metric.maximize(), config.sweep.seed,
        static_cast<std::uint64_t>(config.sweep.max_trials), layout);
  }
  throw Error("make_sampler: unknown sweep.method '" + method + "'");
}

}  // namespace sweep::search
