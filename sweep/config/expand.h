/*
 * expand.h — a SweepConfig → its trials: first a cheap TrialPoint (which values, which seed),
 * then, only when the trial is about to run, its full, checked TrainConfig (resolve_trial).
 *
 * Grid order: parameters in the file's order, the last varying fastest (as itertools.product),
 * each point repeated `repeats` times (repeat fastest). Random: point k is drawn from
 * (sweep.seed, k), so the same file gives the same trials. Trial numbers start at 0, as the
 * store's and the scheduler's do (trials/000/ is trial 0).
 *
 * The decision: points are computed without reading any config (microseconds each), so a sweep
 * of any allowed size is counted, stored and listed at once; resolving a trial reads its own copy
 * of the YAML tree (tenths of a millisecond), so it happens when the trial starts. load_config
 * still checks trials before anything runs: every trial when there are at most
 * kTrialsCheckedOneByOne, else those first ones plus every value of every parameter once; a
 * later trial whose combination of values is invalid fails alone, with the same message.
 *
 *   auto config = sweep::config::load_config("configs/quickstart.yaml");
 *   for (std::uint64_t i = 0; i < config.trial_count(); ++i) {
 *     const TrialPlan plan = sweep::config::resolve_trial(config, i);   // throws ConfigError
 *     train(plan.config, ...);
 *   }
 */
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/json.h"
#include "sweep/config/config.h"

namespace sweep::config {

// At most this many trials in one sweep (each is a row, a future and a directory); a bigger grid
// is refused with its size and the ways out (max_trials, random search).
inline constexpr std::uint64_t kMaxTrials = 100'000;
// load_config checks this many trials one by one (a few seconds at most), the rest by value.
inline constexpr std::uint64_t kTrialsCheckedOneByOne = 2'000;

// Which values a trial takes, without reading its config.
struct TrialPoint {
  int number = 0;                  // 0-based
  int repeat = 0;                  // 0-based
  std::uint64_t seed = 0;          // training.seed of this trial (the swept seed, or the base's)
  sweep::Json params;              // swept name → value, in sweep.parameters order
  std::vector<std::string> texts;  // per parameter: the value as the file spells it (010, .nan)
  std::vector<Location> where;     // per parameter: where the value came from
};

struct TrialPlan {
  int number = 0;               // 0-based
  sweep::Json params;           // swept name → value, in sweep.parameters order
  trainer::TrainConfig config;  // base + this trial's values (+ seed of the repeat)
  std::string resolved_yaml;    // the trial's whole config as YAML
  int repeat = 0;               // 0-based
  std::uint64_t seed = 0;       // training.seed of this trial
  std::string command;          // external trainer, for people: placeholders filled
                                // except those known at run time ({trial_dir}, {device}...)
  sweep::Json placeholders;     // external trainer: {name} → text for every placeholder
                                // filled above, spelled as in the file (the scheduler
                                // substitutes them per argv word, so a value with spaces
                                // stays one argument)
};

// Trial `index` (< config.trial_count()). For tpe, the random draw of point index / repeats
// (random search's draw with sweep.seed): the point tpe's start-up suggests, which is what
// check_trials checks; tpe's later trials come from its sampler (sweep/search), not from here.
TrialPoint trial_point(const SweepConfig& config, std::uint64_t index);

// Trial `index` taking the values `draws` (one per parameter of the space, in its order, as
// sample_point gives them; value_index >= 0 names one of the parameter's values): its repeat,
// params, texts and where, and its seed as resolve_trial will find it (a swept training.seed,
// else config.base.training.seed, plus the repeat). trial_point is this with grid's or random
// search's draws; a sampler (tpe) calls it with its own.
TrialPoint trial_point_from_draws(const SweepConfig& config, std::uint64_t index,
                                  const std::vector<Draw>& draws);
// The same without a config: `repeats` per point, `base_training_seed` where the config would
// give base.training.seed.
TrialPoint trial_point_from_draws(const SearchSpace& space, std::uint64_t base_training_seed,
                                  int repeats, std::uint64_t index, const std::vector<Draw>& draws);

// The trial's full config, read from its own copy of the YAML tree and checked. Problems go to
// `diagnostics` (the returned plan is then incomplete). Safe to call from several threads.
TrialPlan resolve_trial(const SweepConfig& config, const TrialPoint& point,
                        Diagnostics& diagnostics);
// The same, throwing ConfigError with the trial's problems.
TrialPlan resolve_trial(const SweepConfig& config, std::uint64_t index);

// An external command with the trial's placeholders filled (those known only at run time, such
// as {trial_dir}, stay), and each placeholder's text as the file spells it, without reading the
// trial's config. Throws ConfigError for a placeholder that names nothing.
struct FilledCommand {
  std::string command;
  sweep::Json placeholders = sweep::Json::object();
};
FilledCommand fill_command(const SweepConfig& config, const TrialPoint& point);

// Every trial, resolved (tests, small sweeps). Throws ConfigError naming every bad trial value.
std::vector<TrialPlan> expand(const SweepConfig& config);

// load_config's check of the trials (see above): the size limit, then trials one by one, then
// (beyond kTrialsCheckedOneByOne) each parameter value once. Adds problems to `diagnostics`.
void check_trials(const SweepConfig& config, Diagnostics& diagnostics);

// False when the search space is too broken to enumerate (a grid over a continuous distribution,
// a parameter without values): its problems were reported when it was read.
bool can_expand(const SweepConfig& config);

}  // namespace sweep::config
