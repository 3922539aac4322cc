/*
 * trial_model.h — the model file of a sweep's trial, for `sweep export-model` and `sweep predict`:
 * NAME (or its directory) as the inspect commands take it, and a trial number or the store's one
 * best-trial rule (Store::best_trial, as `sweep best` prints it).
 *
 * The model file is found by its place, OUT/NAME/trials/NNN/model.sweepmodel (sweep_layout.h),
 * next to the store that --db names or OUT/NAME/sweep.db.
 */
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace sweep::cli {

struct TrialModel {
  std::string sweep;
  std::int64_t trial = 0;
  std::string path;     // the model file, which exists
  std::string db_path;  // the sweep's store
};

// Throws sweep::Error: no such sweep or trial, no successful trial for the best, or a trial
// without a model file (external commands write none; a trial that failed or was interrupted,
// or ran before sweep wrote models, has none), each saying what to do.
TrialModel find_trial_model(const std::string& name_or_dir, const std::string& out_dir,
                            const std::string& db_path, std::optional<std::int64_t> trial);

}  // namespace sweep::cli
