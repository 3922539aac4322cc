/*
 * trial_model.cpp — the store opened read-only, the trial chosen, its model file found.
 */
#include "sweep/cli/trial_model.h"

#include <filesystem>

#include "common/check.h"
#include "common/format.h"
#include "store/store.h"
#include "sweep/cli/sweep_argument.h"
#include "sweep/run/run_sweep.h"
#include "sweep/run/sweep_layout.h"

namespace sweep::cli {

namespace fs = std::filesystem;

TrialModel find_trial_model(const std::string& name_or_dir, const std::string& out_dir,
                            const std::string& db_path, std::optional<std::int64_t> trial) {
  const SweepPlace place = sweep_place(name_or_dir, out_dir);
  const fs::path db =
      db_path.empty() ? run::default_db_path(place.out_dir, place.name) : fs::path(db_path);
  if (!fs::exists(db))
    throw Error("no sweep database at " + db.string() +
                (db_path.empty() ? " (give --out DIR or --db PATH)" : ""));
  StoreOptions options;
  options.read_only = true;
  const Store store(db, options);
  const SweepRow sweep = store.sweep_named(place.name);
  TrialModel out;
  out.sweep = sweep.name;
  out.db_path = db.string();
  if (trial) {
    if (!store.trial_by_number(sweep.id, *trial))
      throw Error(printable(sweep.name) + " has no trial " + std::to_string(*trial));
    out.trial = *trial;
  } else {
    const std::optional<BestTrial> best = store.best_trial(sweep.id);
    if (!best || is_broken(best->trial.state))
      throw Error("no successful trial of " + printable(sweep.name) + " reported " +
                  printable(sweep.metric_name) + ": give --trial N");
    out.trial = best->trial.number;
  }
  const fs::path model = run::model_in(run::trial_dir_in(db.parent_path(), out.trial));
  if (!fs::exists(model))
    throw Error("trial " + std::to_string(out.trial) + " of " + printable(sweep.name) +
                " has no model file (" + model.string() +
                "): a built-in trial writes one when it ends with weights to keep (completed, "
                "early stopped or stopped); external commands, failed or interrupted trials and "
                "training.save_model: false write none");
  out.path = model.string();
  return out;
}

}  // namespace sweep::cli
