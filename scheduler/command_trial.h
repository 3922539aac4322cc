/*
 * command_trial.h — a trial that is an external program printing JSON-lines metrics.
 *
 *   command: python3 train.py --lr {training.learning_rate} --out {trial_dir}/model.pt
 *
 * No shell, so no shell injection: the template is split into argv FIRST (whitespace separates
 * words; '…' and "…" quote, \ escapes, as a shell would), THEN each {key} is replaced inside its
 * word — a parameter value containing spaces or `;` stays one argument and is never interpreted.
 * {{ and }} stand for literal braces. Keys: any parameter (dotted path into nested params, or a
 * flat key containing dots), {trial_id}, {trial_number}, {trial_name}, {trial_dir}, {device}.
 * The program is started with posix_spawn in its own process group (so a stop reaches its
 * children), CUDA_VISIBLE_DEVICES set to the trial's GPU index ("" on CPU), the trial's id,
 * number, name, directory and device in SWEEP_TRIAL_* / SWEEP_DEVICE (trial_environment.h),
 * stdin /dev/null.
 *
 * Every stdout line that is a JSON object becomes one MetricPoint per numeric key (besides "step"
 * and "epoch", which give the point's step — else the count of metric lines — and epoch; NaN,
 * Infinity and -Infinity are read as Python writes them; a line with a bad step is refused with
 * its reason in the log: scheduler/metric_line.h; a step that goes backward within one run of the
 * program keeps its values at later steps, said once in the log: scheduler/metric_steps.h); other
 * lines, and all of stderr, go to
 * ctx.log(). Both streams are copied to log_path when set. A NaN or infinite value of the sweep's
 * metric or of a loss stops the program and ends the trial `diverged`.
 * Ending: exit 0 → completed; exit N → failed "exited with code N" + the last stderr lines; a
 * signal → failed "killed by signal N (SIGKILL)"; a stop request → SIGTERM to the group, SIGKILL
 * after kill_grace_s, and the executor maps the stop to the final state; no metric line for
 * metric_timeout_s → killed likewise, failed "no metric reported in N s". Never blocks without a
 * timeout: the pipes are poll()ed in short ticks.
 */
#pragma once

#include <map>
#include <string>
#include <vector>

#include "scheduler/trial.h"

namespace sweep::scheduler {

struct CommandSpec {
  std::string argv_template;               // "python3 train.py --lr {lr}"
  std::string working_dir;                 // "" = the caller's; may contain placeholders
  std::map<std::string, std::string> env;  // added to (or replacing in) the inherited environment;
                                           // values may contain placeholders
  double metric_timeout_s = 0;        // 0 = no limit; counted from start, then from each metric
  std::string log_path;               // "" = none; may contain placeholders; parent dirs made
  std::string trial_dir;              // value of {trial_dir}; may contain {trial_id} etc.
  double kill_grace_s = 5;            // SIGTERM → SIGKILL delay
  std::size_t stderr_tail_lines = 5;  // how many last stderr lines go into a failure message
  // The sweep's metric: when it (or any metric named like a loss) is reported NaN or infinite,
  // the program is stopped and the trial ends `diverged`. "" = only loss-named metrics.
  std::string metric_name;
};

// The returned TrialFn is copyable and may run many trials at once.
TrialFn make_command_trial(CommandSpec spec);

// Exposed for tests and for `sweep run --dry-run`: the argv the trial would run.
// Throws sweep::Error naming the placeholder when a {key} matches no parameter.
std::vector<std::string> split_command_template(const std::string& argv_template);
std::string substitute_placeholders(const std::string& text, const TrialSpec& spec,
                                    const std::string& trial_dir, const Device& device);
// `text` with every brace doubled, so that substitute_placeholders gives it back unchanged: how a
// value that is not a template (JSON, a path) goes into CommandSpec::env.
std::string escape_placeholders(const std::string& text);
std::vector<std::string> expand_command(const CommandSpec& command, const TrialSpec& spec,
                                        const Device& device);

}  // namespace sweep::scheduler
