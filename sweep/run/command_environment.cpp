/*
 * command_environment.cpp — an external-command trial's environment from the sweep's side.
 */
#include "sweep/run/command_environment.h"

#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "scheduler/command_trial.h"
#include "scheduler/trial_environment.h"

namespace sweep::run {

namespace fs = std::filesystem;

namespace {

constexpr const char* kHelperFile = "sweep_trial.py";

bool holds_helper(const fs::path& dir) {
  std::error_code ignored;
  return fs::is_regular_file(dir / kHelperFile, ignored);
}

}  // namespace

namespace {

std::string absolute_dir(const fs::path& run_dir) {
  std::error_code error;
  const fs::path absolute = fs::absolute(run_dir, error);
  return (error ? run_dir : absolute).lexically_normal().string();
}

}  // namespace

Environment command_trial_facts(const config::SweepConfig& config, const config::TrialPoint& point,
                                const fs::path& run_dir) {
  using scheduler::escape_placeholders;
  return {{scheduler::kParamsVariable, escape_placeholders(point.params.dump())},
          {scheduler::kSweepNameVariable, escape_placeholders(config.name)},
          {scheduler::kSweepDirVariable, escape_placeholders(absolute_dir(run_dir))},
          {scheduler::kTrialSeedVariable, std::to_string(point.seed)}};
}

std::string sweep_dir_entry(const fs::path& run_dir) {
  return std::string(scheduler::kSweepDirVariable) + "=" + absolute_dir(run_dir);
}

Environment with_python_helper(Environment env) {
  const std::string dir = python_helper_dir();
  if (dir.empty()) return env;
  std::string path = dir;
  if (const char* inherited = std::getenv("PYTHONPATH"); inherited && *inherited)
    path += std::string(":") + inherited;
  env["PYTHONPATH"] = scheduler::escape_placeholders(path);
  return env;
}

std::string python_helper_dir() {
  std::error_code error;
  const fs::path exe = fs::read_symlink("/proc/self/exe", error);
  if (!error) {
    const fs::path installed = exe.parent_path().parent_path() / "share" / "sweep" / "python";
    if (holds_helper(installed)) return installed.lexically_normal().string();
  }
#ifdef SWEEP_PYTHON_SOURCE_DIR
  if (holds_helper(SWEEP_PYTHON_SOURCE_DIR)) return SWEEP_PYTHON_SOURCE_DIR;
#endif
  return "";
}

}  // namespace sweep::run
