/*
 * sweep_spec_reader.cpp — sweep / resources / trainer sections.
 *
 * A parameter block is read in two steps: which distribution (explicit, or inferred the W&B way
 * from which keys are present), then that distribution's own keys, so a `q` given to `uniform`
 * is reported as a key uniform does not take rather than silently ignored.
 */
#include "sweep/config/sweep_spec_reader.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <numeric>
#include <set>

#include "common/format.h"
#include "common/json.h"
#include "scheduler/command_trial.h"
#include "scheduler/stopping/hyperband.h"
#include "scheduler/stopping/stopping_policy.h"
#include "sweep/config/command_check.h"
#include "sweep/config/suggest.h"
#include "sweep/config/yaml_tree.h"

namespace sweep::config {

namespace {

bool is_integer_text(const YAML::Node& node) {
  if (!node.IsScalar()) return false;
  std::int64_t value = 0;
  const std::string& text = node.Scalar();
  return !read_integer(node, value) && text.find_first_of(".eE") == std::string::npos;
}

// A value as the file wrote it: a scalar's own text, a list or map as flow YAML.
std::string source_text(const YAML::Node& node) {
  if (node.IsScalar()) return node.Scalar();
  YAML::Emitter out;
  out << YAML::Flow << node;
  return out.c_str();
}

bool needs_min_max(Distribution d) {
  switch (d) {
    case Distribution::uniform:
    case Distribution::int_uniform:
    case Distribution::q_uniform:
    case Distribution::log_uniform:
    case Distribution::log_uniform_values:
    case Distribution::q_log_uniform:
    case Distribution::q_log_uniform_values:
      return true;
    default:
      return false;
  }
}

bool is_quantized(Distribution d) {
  return d == Distribution::q_uniform || d == Distribution::q_log_uniform ||
         d == Distribution::q_log_uniform_values || d == Distribution::q_normal ||
         d == Distribution::q_log_normal;
}

void read_param(MapReader r, const std::string& name, const YAML::Node& key_node,
                const std::string& method, ParamSpec& p) {
  p.name = name;
  p.where = r.tree().at_mark(key_node.Mark());
  if (!r.present()) {
    r.diagnostics().error(p.where, r.path(),
                          "expected a map such as {values: [...]} or {min: 0, max: 1}");
    return;
  }
  // Which distribution. Ray's and Optuna's spellings take values, W&B's log_uniform exponents:
  // never let the one be read (or suggested) as the other.
  if (const YAML::Node given = r.node("distribution"); given.IsScalar()) {
    const std::string& spelled = given.Scalar();
    if (spelled == "loguniform" || spelled == "qloguniform" || spelled == "reciprocal") {
      const std::string meant =
          spelled == "qloguniform" ? "q_log_uniform_values" : "log_uniform_values";
      r.error("distribution", "'" + spelled +
                                  "' is Ray's and Optuna's name, whose min and max are values: "
                                  "write " +
                                  meant +
                                  " (here, as in W&B, log_uniform takes natural-log exponents)");
      return r.finish();
    }
  }
  std::string explicit_name;
  const bool has_explicit =
      r.choice("distribution", explicit_name, distribution_names(), "distribution");
  const YAML::Node values = r.node("values");
  const YAML::Node value = r.node("value");
  const YAML::Node min = r.node("min");
  const YAML::Node max = r.node("max");
  if (has_explicit) {
    p.distribution = *parse_distribution(explicit_name);
  } else if (r.has("distribution")) {
    return r.finish();  // the unknown name was reported; its keys would only add noise
  } else if (values.IsDefined()) {
    p.distribution = Distribution::categorical;
  } else if (value.IsDefined()) {
    p.distribution = Distribution::constant;
  } else if (min.IsDefined() && max.IsDefined()) {
    p.distribution = is_integer_text(min) && is_integer_text(max) ? Distribution::int_uniform
                                                                  : Distribution::uniform;
  } else {
    r.diagnostics().error(p.where, r.path(),
                          "cannot tell the distribution: give values: [...], value: x, "
                          "min and max, or distribution: NAME");
    r.finish();
    return;
  }

  const std::string dist = to_string(p.distribution);
  // The keys this distribution takes; the others are reported by name.
  auto reject = [&](const char* key) {
    if (r.has(key)) r.error(key, "distribution " + dist + " does not take '" + key + "'");
  };

  if (p.distribution == Distribution::categorical) {
    if (!values.IsDefined()) {
      r.error("distribution", "categorical needs values: [...]");
    } else if (!values.IsSequence() || values.size() == 0) {
      r.error("values", "expected a non-empty list, got " + describe_node(values));
    } else {
      for (std::size_t i = 0; i < values.size(); ++i) {
        p.values.push_back(to_json(values[i]));
        p.value_locations.push_back(r.tree().at_mark(values[i].Mark()));
        p.value_texts.push_back(source_text(values[i]));
        // The same value twice (0.01 and 1e-2 too) trains the same trials twice in a grid and
        // doubles its odds in a random draw: said, with `repeats` for running a point again.
        for (std::size_t j = 0; j < i; ++j)
          if (p.values[j] == p.values[i]) {
            r.diagnostics().error(p.value_locations[i], r.path_of("values"),
                                  "lists " + p.value_texts[i] + " again (" + p.value_texts[j] +
                                      ", item " + std::to_string(j + 1) +
                                      "): every point would train twice (sweep.repeats: N runs "
                                      "each point with N seeds)");
            break;
          }
      }
    }
    const YAML::Node probabilities = r.node("probabilities");
    if (probabilities.IsDefined()) {
      double sum = 0;
      bool ok = probabilities.IsSequence() && probabilities.size() == p.values.size();
      for (std::size_t i = 0; ok && i < probabilities.size(); ++i) {
        double prob = 0;
        ok = !read_number(probabilities[i], prob) && prob >= 0;
        p.probabilities.push_back(prob);
        sum += prob;
      }
      if (!ok)
        r.error("probabilities",
                "expected one number >= 0 per value (" + std::to_string(p.values.size()) + ")");
      else if (std::fabs(sum - 1.0) > 1e-6)
        r.error("probabilities", "must sum to 1, got " + format_number(sum));
      if (!ok || std::fabs(sum - 1.0) > 1e-6) p.probabilities.clear();
    }
    for (const char* key : {"value", "min", "max", "q", "mu", "sigma"}) reject(key);
  } else if (p.distribution == Distribution::constant) {
    if (!value.IsDefined()) {
      r.error("distribution", "constant needs value: x");
    } else {
      p.values.push_back(to_json(value));
      p.value_locations.push_back(r.tree().at_mark(value.Mark()));
      p.value_texts.push_back(source_text(value));
    }
    for (const char* key : {"values", "probabilities", "min", "max", "q", "mu", "sigma"})
      reject(key);
  } else {
    for (const char* key : {"values", "value", "probabilities"}) reject(key);
    if (needs_min_max(p.distribution)) {
      const bool has_min = r.number("min", p.min);
      const bool has_max = r.number("max", p.max);
      if (!min.IsDefined()) r.error("distribution", dist + " needs min");
      if (!max.IsDefined()) r.error("distribution", dist + " needs max");
      if (has_min && has_max) {
        if (p.max < p.min)
          r.error("max",
                  "must be >= min (" + format_number(p.min) + "), got " + format_number(p.max));
        else if (p.max == p.min && method == "tpe")  // a model over one point: say so
          r.error("max", "tpe needs max > min, got min = max = " + format_number(p.min) +
                             " (a parameter with one value is written value: " +
                             format_number(p.min) + ")");
        if (p.distribution == Distribution::int_uniform &&
            (p.min != std::floor(p.min) || p.max != std::floor(p.max)))
          r.error("min", "int_uniform needs integer min and max");
        const bool values_kind = p.distribution == Distribution::log_uniform_values ||
                                 p.distribution == Distribution::q_log_uniform_values;
        if (values_kind && p.min <= 0)
          r.error("min", dist + " takes the values themselves: min must be > 0, got " +
                             format_number(p.min) +
                             " (log_uniform takes natural-log exponents instead)");
        const bool exponents_kind = p.distribution == Distribution::log_uniform ||
                                    p.distribution == Distribution::q_log_uniform;
        if (exponents_kind && p.min > 0 && p.max <= 1 && p.max > p.min)
          r.diagnostics().warn(
              r.where("min"), r.path(),
              dist + " takes natural-log exponents (W&B's meaning): min " + format_number(p.min) +
                  " and max " + format_number(p.max) + " draw values from e^" +
                  format_number(p.min) + " = " + significant(std::exp(p.min), 4) + " to e^" +
                  format_number(p.max) + " = " + significant(std::exp(p.max), 4) +
                  "; for values between " + format_number(p.min) + " and " + format_number(p.max) +
                  " write " +
                  (p.distribution == Distribution::log_uniform ? "log_uniform_values"
                                                               : "q_log_uniform_values"));
      }
      reject("mu");
      reject("sigma");
    } else {
      r.number("mu", p.mu);
      r.number("sigma", p.sigma, Range::positive());
      reject("min");
      reject("max");
    }
    if (is_quantized(p.distribution)) {
      const YAML::Node q = r.node("q");
      if (r.number("q", p.q, Range::positive())) p.integer_q = is_integer_text(q);
    } else {
      reject("q");
    }
  }
  r.finish();
}

// resources.gpus_per_trial takes a list of GPU counts (whole numbers >= 1, or all).
void check_gpus_per_trial_values(MapReader& sweep, const std::string& key, const ParamSpec& p) {
  if (!p.is_discrete()) {
    sweep.diagnostics().error(p.where, key,
                              "is swept with a list of GPU counts, such as values: [1, 2]");
    return;
  }
  for (std::size_t i = 0; i < p.values.size(); ++i) {
    const sweep::Json& v = p.values[i];
    const bool whole = v.is_number_integer() && v.get<std::int64_t>() >= 1;
    if (!whole && !(v.is_string() && v.get<std::string>() == "all"))
      sweep.diagnostics().error(p.value_locations[i], key,
                                "a GPU count is a whole number >= 1 or all, got " + v.dump());
  }
}

void read_parameter_map(MapReader& sweep, const YAML::Node& params, const std::string& path,
                        const std::string& prefix, SearchSpace& space, bool external_trainer,
                        const std::string& method);

void read_parameters(MapReader& sweep, SearchSpace& space, bool external_trainer,
                     const std::string& method) {
  const YAML::Node params = sweep.node("parameters");
  if (!params.IsDefined() || params.IsNull()) return;
  const std::string path = sweep.path_of("parameters");
  if (!params.IsMap()) {
    sweep.error("parameters", "expected a map of dotted keys, got " + describe_node(params));
    return;
  }
  read_parameter_map(sweep, params, path, "", space, external_trainer, method);
}

// One level of `parameters`; W&B's nested dicts ({parameters: {...}} as a parameter) give dotted
// names (optimizer.lr), as ${args} passes them.
void read_parameter_map(MapReader& sweep, const YAML::Node& params, const std::string& path,
                        const std::string& prefix, SearchSpace& space, bool external_trainer,
                        const std::string& method) {
  for (const auto& entry : params) {
    const std::string name = prefix + entry.first.Scalar();
    const std::string key_path = path + "." + entry.first.Scalar();
    if (entry.second.IsMap() && entry.second["parameters"].IsDefined()) {
      const YAML::Node nested = entry.second["parameters"];
      if (entry.second.size() != 1 || !nested.IsMap())
        sweep.diagnostics().error(sweep.tree().at_mark(entry.first.Mark()), key_path,
                                  "a parameter dict holds only parameters: {NAME: {...}, ...}");
      else
        read_parameter_map(sweep, nested, key_path + ".parameters", name + ".", space,
                           external_trainer, method);
      continue;
    }
    ParamSpec p;
    read_param(MapReader(sweep.tree(), sweep.diagnostics(), entry.second, key_path), name,
               entry.first, method, p);
    const std::string section = split_dotted(name).front();
    p.sets_config_key = section == "data" || section == "model" || section == "training";
    if (name == kGpusPerTrialKey) {  // read by the run, per trial, not by the trainer's reader
      check_gpus_per_trial_values(sweep, key_path, p);
      space.params.push_back(std::move(p));
      continue;
    }
    if (!p.sets_config_key && !external_trainer && name.find('.') != std::string::npos) {
      std::vector<std::string> sections = {"data", "model", "training"};
      std::string text = "only data.*, model.* and training.* keys (and " +
                         std::string(kGpusPerTrialKey) + ") can be swept";
      const std::string near = nearest(section, sections);
      if (!near.empty()) text += " (did you mean '" + near + name.substr(section.size()) + "'?)";
      sweep.diagnostics().error(p.where, key_path, text);
      continue;
    }
    // A flat name (W&B's learning_rate) for the built-in trainer is named after the readers have
    // run: map_flat_parameter_names().
    space.params.push_back(std::move(p));
  }
}

void read_early_terminate(MapReader r, std::optional<EarlyTerminateSpec>& out) {
  if (!r.present()) return;
  const std::size_t errors_before = r.diagnostics().error_count();
  EarlyTerminateSpec spec;
  if (!r.choice("type", spec.type, {"median", "asha", "hyperband"}, "early_terminate type")) {
    if (!r.has("type")) r.error("type", "early_terminate needs type: median, asha or hyperband");
    return r.finish();
  }
  spec.policy["type"] = spec.type;
  // (accepted key, the scheduler's key, lowest value) per type; other keys are reported unknown.
  struct Key {
    const char* name;
    const char* policy_key;
    int lowest;
  };
  std::vector<Key> keys;
  if (spec.type == "median") {
    keys = {{"min_epochs", "min_epochs", 1},
            {"grace_period", "min_epochs", 1},
            {"min_trials", "min_trials", 1}};
  } else if (spec.type == "asha") {
    keys = {{"min_epochs", "min_epochs", 1},   {"min_iter", "min_epochs", 1},
            {"grace_period", "min_epochs", 1}, {"eta", "eta", 2},
            {"max_epochs", "max_epochs", 0},   {"max_iter", "max_epochs", 0}};
  } else {
    keys = {{"min_iter", "min_iter", 1}, {"min_epochs", "min_iter", 1}, {"eta", "eta", 2},
            {"max_iter", "max_iter", 1}, {"max_epochs", "max_iter", 1}, {"s", "s", 1}};
  }
  for (const Key& key : keys) {
    int value = 0;
    if (!r.integer(key.name, value, Range::at_least(key.lowest))) continue;
    if (spec.policy.contains(key.policy_key)) {
      r.error(key.name, std::string("gives ") + key.policy_key + " a second time");
      continue;
    }
    spec.policy[key.policy_key] = value;
  }
  // W&B's strict: compare the trial's value AT the band (the original algorithm), not its best
  // so far. Only hyperband takes it.
  if (spec.type == "hyperband") {
    bool strict = false;
    if (r.boolean("strict", strict)) spec.policy["strict"] = strict;
  }
  r.finish();
  if (spec.type == "hyperband") {
    const bool by_min = spec.policy.contains("min_iter");
    const bool by_max = spec.policy.contains("max_iter") || spec.policy.contains("s");
    if (by_min && by_max)
      r.error("type",
              "hyperband takes either min_iter (and eta) or max_iter and s (and eta), "
              "not both");
    else if (by_max && !(spec.policy.contains("max_iter") && spec.policy.contains("s")))
      r.error("type", "hyperband with max_iter also needs s (and the other way round)");
    else if (!by_min && !by_max)
      r.error("type", "hyperband needs min_iter (or max_iter and s), as in W&B");
  }
  if (spec.type == "asha" && spec.policy.value("max_epochs", 0) > 0 &&
      spec.policy.value("max_epochs", 0) <= spec.policy.value("min_epochs", 1))
    r.error(r.has("max_iter") ? "max_iter" : "max_epochs",
            "ASHA's rungs end before max_epochs " +
                std::to_string(spec.policy.value("max_epochs", 0)) +
                ", and its first is at min_epochs " +
                std::to_string(spec.policy.value("min_epochs", 1)) +
                ": there would be none, and nothing would be stopped");
  // What the sweep will build from this block (run_sweep.cpp), built now: whatever it would
  // refuse is refused here, by `sweep validate` too, before a sweep's directory exists.
  if (r.diagnostics().error_count() == errors_before) try {
      scheduler::make_stopping_policy(spec.policy, "metric", scheduler::MetricGoal::maximize);
    } catch (const Error& e) {
      r.error("type", e.what());
    }
  out = spec;
}

}  // namespace

void read_sweep_spec(MapReader r, SweepSpec& out, bool external_trainer) {
  std::string method = out.method;
  if (r.has("method")) {
    const YAML::Node node = r.node("method");
    if (node.IsScalar() && node.Scalar() == "bayes") {
      // W&B's name for its model-based search; sweep runs TPE for it (README), not a Gaussian
      // process. The word is kept for messages.
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

void read_resources(MapReader r, ResourcesSpec& out) {
  r.choice("execution", out.execution, {"auto", "cpu", "gpu", "multi-gpu"}, "execution");
  const YAML::Node gpus = r.node("gpus");
  if (gpus.IsDefined()) {
    if (gpus.IsScalar() && gpus.Scalar() == "all") {
      out.all_gpus = true;
    } else if (gpus.IsSequence()) {
      std::vector<int> list;
      if (r.integer_list("gpus", list, Range::closed(0, 1023))) {
        std::vector<int> sorted = list;
        std::sort(sorted.begin(), sorted.end());
        if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
          r.error("gpus", "lists a GPU twice");
        else if (list.empty())
          r.error("gpus", "the list is empty (use gpus: all, or execution: cpu)");
        out.all_gpus = false;
        out.gpus = list;
      }
    } else {
      r.error("gpus",
              "expected 'all' or a list of GPU indices such as [0, 2], got " + describe_node(gpus));
    }
  }
  const Range slots = Range::closed(1, kMaxSlotsPerDevice);
  r.integer("cpu_slots", out.cpu_slots, slots);
  r.integer("trials_per_gpu", out.trials_per_gpu, slots);
  if (const YAML::Node n = r.node("gpus_per_trial"); n.IsDefined()) {
    if (n.IsScalar() && n.Scalar() == "all")
      out.gpus_per_trial_all = true;
    else
      r.integer("gpus_per_trial", out.gpus_per_trial, Range::at_least(1));
  }
  r.integer("cpu_threads", out.cpu_threads, Range::closed(0, kMaxSlotsPerDevice));
  r.number("trial_timeout", out.trial_timeout, Range::at_least(0));
  if (const YAML::Node n = r.node("fuse"); n.IsDefined()) {
    if (n.IsScalar() && n.Scalar() == "auto")
      out.fuse = ResourcesSpec::kFuseAuto;
    else if (n.IsScalar() && (n.Scalar() == "off" || n.Scalar() == "false"))
      out.fuse = 0;
    else if (std::int64_t k = 0; read_integer(n, k) || k < 1 || k > 100000)
      r.error("fuse",
              "expected auto, off, or the most trials per fused array (an integer >= 1), "
              "got " +
                  describe_node(n));
    else
      out.fuse = static_cast<int>(k);
  }
  r.finish();
}

void read_external_trainer(MapReader r, std::optional<ExternalTrainerSpec>& out) {
  if (!r.present()) return;
  ExternalTrainerSpec spec;
  if (!r.text("command", spec.command) && !r.has("command"))
    r.error("command", "trainer needs command: \"program --flag {training.learning_rate}\"");
  else if (spec.command.find_first_not_of(" \t") == std::string::npos && r.has("command"))
    r.error("command", "the command is empty");
  else if (r.has("command")) {
    // Split now as each trial will (no shell: quotes and escapes as a shell reads them), so an
    // unbalanced quote is a config error, not a failure of every trial.
    try {
      const std::vector<std::string> argv = scheduler::split_command_template(spec.command);
      std::error_code error;
      const std::filesystem::path here = std::filesystem::current_path(error);
      if (!error)
        if (const std::string missing = check_command_files(argv, here); !missing.empty())
          r.error("command", missing);
    } catch (const Error& e) {
      r.error("command", e.what());
    }
  }
  r.number("metric_timeout", spec.metric_timeout, Range::at_least(0));
  r.finish();
  out = spec;
}

namespace {

// The first epoch at which an early_terminate block (read_early_terminate's policy) can stop a
// trial: median's and ASHA's min_epochs, hyperband's first band.
std::int64_t first_decision_epoch(const sweep::Json& policy) {
  if (policy.contains("min_epochs")) return policy.at("min_epochs").get<std::int64_t>();
  if (policy.contains("min_iter")) return policy.at("min_iter").get<std::int64_t>();
  if (policy.contains("max_iter") && policy.contains("s")) try {
      return scheduler::hyperband_bands_from_max_iter(policy.at("max_iter").get<std::int64_t>(),
                                                      policy.value("eta", 3),
                                                      policy.at("s").get<int>())
          .front();
    } catch (const Error&) {
      // Refused where the block is read (read_early_terminate).
    }
  return 1;
}

// The most epochs a trial trains, and what says so: the largest value of a swept
// training.epochs (whatever the base config says, every trial sets its own), else the base's.
std::pair<std::int64_t, std::string> last_epoch(const SweepSpec& sweep,
                                                const trainer::TrainConfig& base) {
  for (const ParamSpec& p : sweep.space.params) {
    if (!p.sets_config_key || canonical_path(p.name) != "training.epochs") continue;
    double most = 0;
    bool any = false;
    if (p.is_discrete()) {
      for (const sweep::Json& v : p.values)
        if (v.is_number())
          most = any ? std::max(most, v.get<double>()) : v.get<double>(), any = true;
    } else {
      most = p.max, any = true;
    }
    if (any)
      return {static_cast<std::int64_t>(std::floor(most)), "the largest swept training.epochs"};
  }
  return {base.training.epochs, "training.epochs"};
}

}  // namespace

void check_sweep_against_training(MapReader& sweep_reader, const SweepSpec& sweep,
                                  const trainer::TrainConfig& base, bool external_trainer) {
  MapReader metric = sweep_reader.section("metric");
  if (!external_trainer && base.data.validation == trainer::Validation::none &&
      sweep.metric.name.rfind("val_", 0) == 0)
    metric.error("name", "metric " + sweep.metric.name +
                             " needs a validation set, but data.validation is none");
  // A regression set reports no accuracy (trainer/loop/batch_loss.h): a sweep on one would find
  // no trial's metric.
  const bool accuracy =
      sweep.metric.name == "val_accuracy" || sweep.metric.name == "train_accuracy";
  if (!external_trainer && base.data.task == trainer::Task::regression && accuracy) {
    const std::string text =
        "the data is a regression set (data.task: regression), which reports "
        "val_rmse, val_mae, val_r2 and train_mae, not " +
        sweep.metric.name;
    if (metric.has("name"))
      metric.error("name", text);
    else
      sweep_reader.error("metric", text +
                                       " (the default metric): name one, e.g. "
                                       "metric: {name: val_rmse, goal: minimize}");
  }
  if (sweep.early_terminate && !external_trainer) {
    const std::int64_t first = first_decision_epoch(sweep.early_terminate->policy);
    const auto [last, which] = last_epoch(sweep, base);
    MapReader early = sweep_reader.section("early_terminate");
    if (first > last)
      early.error("type", "its first decision is at epoch " + std::to_string(first) +
                              ", after the last epoch any trial trains (" + which + " " +
                              std::to_string(last) + "): nothing would be stopped");
  }
}

void map_flat_parameter_names(SweepSpec& sweep, const std::vector<std::string>& asked_keys,
                              const std::string& parameters_path, Diagnostics& diagnostics) {
  auto is_trainer_section = [](const std::string& section) {
    return section == "data" || section == "model" || section == "training";
  };
  for (ParamSpec& p : sweep.space.params) {
    if (p.sets_config_key || p.name.find('.') != std::string::npos) continue;
    std::set<std::string> candidates;
    std::vector<std::string> leaves;
    for (const std::string& key : asked_keys) {
      const std::vector<std::string> parts = split_dotted(key);
      if (parts.size() < 2 || !is_trainer_section(parts.front())) continue;
      leaves.push_back(parts.back());
      if (parts.back() == p.name) candidates.insert(key);
    }
    for (const auto& [where, canonical] : key_aliases())
      if (where.second == p.name && is_trainer_section(split_dotted(where.first).front()))
        candidates.insert(where.first + "." + canonical);
    std::size_t shallowest = SIZE_MAX;
    for (const std::string& key : candidates)
      shallowest = std::min(shallowest, split_dotted(key).size());
    std::vector<std::string> best;
    for (const std::string& key : candidates)
      if (split_dotted(key).size() == shallowest) best.push_back(key);
    const std::string path = parameters_path + "." + p.name;
    if (best.size() == 1) {
      p.name = best.front();
      p.sets_config_key = true;
    } else if (best.size() > 1) {
      diagnostics.error(
          p.where, path,
          "'" + p.name + "' could be " + join(best, " or ") + ": write the dotted name");
    } else {
      std::string text = "'" + p.name +
                         "' is no key of data, model or training (a flat name is looked up "
                         "there: learning_rate means training.learning_rate)";
      const std::string near = nearest(p.name, leaves);
      if (!near.empty()) text += "; did you mean '" + near + "'?";
      diagnostics.error(p.where, path,
                        text + "; only data.*, model.* and training.* keys (and " +
                            std::string(kGpusPerTrialKey) + ") can be swept");
    }
  }
}

void check_parameters_set_distinct_keys(const SweepSpec& sweep, Diagnostics& diagnostics) {
  const std::vector<ParamSpec>& params = sweep.space.params;
  for (std::size_t j = 0; j < params.size(); ++j) {
    if (!params[j].sets_config_key) continue;
    const std::string later = canonical_path(params[j].name);
    for (std::size_t i = 0; i < j; ++i) {
      if (!params[i].sets_config_key) continue;
      const std::string earlier = canonical_path(params[i].name);
      const auto inside = [](const std::string& key, const std::string& section) {
        return key.size() > section.size() && key.compare(0, section.size(), section) == 0 &&
               key[section.size()] == '.';
      };
      const Location& other = params[i].where;
      const std::string that =
          "the parameter " + (other.line > 0 ? "at line " + std::to_string(other.line) +
                                                   ", column " + std::to_string(other.column)
                                             : "of " + other.text());
      std::string text;
      if (later == earlier)
        text = "sets " + later + ", as " + that + " does";
      else if (inside(later, earlier) || inside(earlier, later))
        text = "sets " + later + ", and " + that + " sets " + earlier +
               (inside(later, earlier) ? ", which holds it" : ", inside it");
      if (text.empty()) continue;
      diagnostics.error(params[j].where, "",
                        text +
                            ": in every trial one would overwrite the other; "
                            "sweep one of them");
      break;
    }
  }
}

}  // namespace sweep::config
