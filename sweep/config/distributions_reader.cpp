/*
 * distributions_reader.cpp — the sweep's `parameters` block.
 *
 * A parameter block is read in two steps: which distribution (explicit, or inferred the W&B way
 * from which keys are present), then that distribution's own keys, so a `q` given to `uniform`
 * is reported as a key uniform does not take rather than silently ignored.
 */
#include "sweep/config/distributions_reader.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "common/format.h"
#include "common/json.h"
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

}  // namespace

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

}  // namespace sweep::config
