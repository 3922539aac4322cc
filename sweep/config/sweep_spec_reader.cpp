/*
 * sweep_spec_reader.cpp — the sweep section: its method, metric and trial counts read here, its
 * parameters (distributions_reader) and early_terminate (early_terminate_reader) by their own
 * readers, and the checks that need all of them together.
 */
#include "sweep/config/sweep_spec_reader.h"

#include <algorithm>

#include "common/format.h"
#include "sweep/config/distributions_reader.h"
#include "sweep/config/early_terminate_reader.h"
#include "sweep/config/suggest.h"

namespace sweep::config {

void read_sweep_spec(MapReader r, SweepSpec& out, bool external_trainer) {
  std::string method = out.method;
  if (r.has("method")) {
    const YAML::Node node = r.node("method");
    if (node.IsScalar() && node.Scalar() == "bayes") {
      // W&B's name for its model-based search; sweep runs TPE for it (docs/search.md), not a
      // Gaussian process. The word is kept for messages.
      method = "tpe";
      out.method_as_written = "bayes";
    } else {
      r.choice("method", method, {"grid", "random", "tpe"}, "method");
    }
  }
  out.method = method;

  MapReader metric = r.section("metric");
  std::string name = out.metric.name;
  if (metric.text("name", name)) {
    if (name.empty()) metric.error("name", "the metric name is empty");
    const auto& builtin = builtin_metric_names();
    if (!external_trainer && std::find(builtin.begin(), builtin.end(), name) == builtin.end()) {
      const std::string near = nearest(name, builtin);
      metric.error("name", "unknown metric '" + name + "': " +
                               (near.empty() ? "the built-in trainer reports " + join(builtin)
                                             : "did you mean '" + near + "'?") +
                               " (an external trainer command may report any name)");
    }
  }
  out.metric.name = name;
  std::string goal;
  // A loss, an error, or a regression's RMSE / MAE: lower is better (val_r2 is higher).
  const bool looks_like_loss = name.find("loss") != std::string::npos ||
                               name.find("error") != std::string::npos || name.ends_with("rmse") ||
                               name.ends_with("mae");
  if (metric.choice("goal", goal, {"maximize", "minimize"}, "goal")) {
    out.metric.goal = goal;
    // Runs, but picks the worst trial as the best and stops the good ones early.
    if (looks_like_loss && goal == "maximize")
      r.diagnostics().warn(metric.where("goal"), metric.path_of("goal"),
                           "maximizes " + name +
                               ", which reads as a loss or an error (lower is "
                               "better): the best trial would be the worst one");
  } else if (!metric.has("goal")) {
    out.metric.goal = looks_like_loss ? "minimize" : "maximize";
  }
  double target = 0;
  if (metric.number("target", target)) out.metric.target = target;
  metric.finish();

  read_parameters(r, out.space, external_trainer, out.method);
  r.integer64("max_trials", out.max_trials, Range::at_least(1));
  // W&B's run_cap: "no more than this number of runs", which is what max_trials caps.
  if (r.has("run_cap")) {
    if (r.has("max_trials"))
      r.error("run_cap", "run_cap (W&B's name) and max_trials are the same cap: give one");
    else
      r.integer64("run_cap", out.max_trials, Range::at_least(1));
  }
  r.unsigned64("seed", out.seed);
  r.integer("repeats", out.repeats, Range::at_least(1));
  read_early_terminate(r.section("early_terminate"), out.early_terminate);
  r.finish();

  const bool no_count = out.max_trials == 0 && !r.has("max_trials") && !r.has("run_cap");
  if (out.method == "random" && no_count)
    r.error("method", "random search needs max_trials: N (W&B's run_cap)");
  if (out.method == "tpe" && no_count)
    r.error("method", (out.method_as_written == "bayes" ? "bayes (run as tpe)" : "tpe") +
                          std::string(" needs max_trials: N (W&B's run_cap), the number of "
                                      "trials it suggests"));
  if (out.method == "grid") {
    for (const ParamSpec& p : out.space.params)
      if (!p.is_discrete())
        r.diagnostics().error(p.where, r.path_of("parameters") + "." + p.name,
                              std::string("grid needs values: distribution ") +
                                  to_string(p.distribution) +
                                  " has no finite set of values (give values: [...], or use "
                                  "method: random)");
  }
}

}  // namespace sweep::config
