/*
 * submitted_job.cpp — the "# sweep-job {json}" line: JSON on one line (nlohmann's dump escapes
 * newlines), so a path with any character in it survives the round trip.
 */
#include "sweep/queue/submitted_job.h"

#include <nlohmann/json.hpp>

#include "common/check.h"

namespace sweep::queue {

namespace fs = std::filesystem;

namespace {
constexpr std::string_view kPrefix = "# sweep-job ";
}

fs::path SubmittedJob::run_dir() const {
  const fs::path out(output_dir);
  return (out.is_absolute() ? out : fs::path(working_dir) / out) / name;
}

fs::path SubmittedJob::sweep_db() const { return run_dir() / "sweep.db"; }

std::string attach_job_line(const std::string& config_yaml, const SubmittedJob& job) {
  const nlohmann::json line = {{"cwd", job.working_dir},
                               {"name", job.name},
                               {"output_dir", job.output_dir},
                               {"overrides", job.overrides},
                               {"trial_crash_limit", job.trial_crash_limit}};
  std::string text = config_yaml;
  if (!text.empty() && text.back() != '\n') text += '\n';
  return text + std::string(kPrefix) + line.dump() + "\n";
}

std::optional<SubmittedJob> read_job_line(const std::string& config_yaml) {
  std::size_t end = config_yaml.size();
  while (end > 0 && config_yaml[end - 1] == '\n') --end;
  const std::size_t start = config_yaml.rfind('\n', end == 0 ? 0 : end - 1);
  const std::size_t begin = start == std::string::npos ? 0 : start + 1;
  const std::string_view last(config_yaml.data() + begin, end - begin);
  if (last.substr(0, kPrefix.size()) != kPrefix) return std::nullopt;
  const nlohmann::json line = nlohmann::json::parse(last.substr(kPrefix.size()), nullptr, false);
  if (line.is_discarded() || !line.is_object())
    throw Error("a queued job's '# sweep-job' line is not valid JSON: " + std::string(last));
  SubmittedJob job;
  job.working_dir = line.value("cwd", "");
  job.name = line.value("name", "");
  job.output_dir = line.value("output_dir", "runs");
  job.overrides = line.value("overrides", std::vector<std::string>{});
  job.trial_crash_limit = line.value("trial_crash_limit", 0);
  return job;
}

}  // namespace sweep::queue
