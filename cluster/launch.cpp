/*
 * launch.cpp — the launchers' environment variables, read once, the most specific first.
 */
#include "cluster/launch.h"

#include <cstdlib>
#include <string>

#include "common/check.h"

namespace sweep::cluster {

namespace {

std::optional<int> env_int(const char* name) {
  const char* text = std::getenv(name);
  if (!text || !*text) return std::nullopt;
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  if (*end != '\0' || value < 0 || value > 1'000'000) return std::nullopt;
  return static_cast<int>(value);
}

}  // namespace

LaunchInfo detect_launch() {
  struct Source {
    const char *size, *rank, *launcher;
  };
  constexpr Source kSources[] = {
      {"OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK", "mpirun"},
      {"PMI_SIZE", "PMI_RANK", "an MPI launcher"},
      {"SLURM_STEP_NUM_TASKS", "SLURM_PROCID", "srun"},
  };
  for (const Source& s : kSources)
    if (auto size = env_int(s.size); size && *size >= 1)
      return {*size, env_int(s.rank).value_or(0), s.launcher};
  return {};
}

ClusterOptions cluster_options_from_environment() {
  ClusterOptions options;
  if (const char* text = std::getenv(kRankTimeoutVariable); text && *text) {
    char* end = nullptr;
    const double seconds = std::strtod(text, &end);
    if (*end != '\0' || !(seconds > 0) || seconds > 1e6)
      throw Error(std::string(kRankTimeoutVariable) + "='" + text +
                  "': expected a positive number of seconds");
    options.rank_timeout_s = seconds;
  }
  if (const char* text = std::getenv(kCoordinatorOnlyVariable); text && *text) {
    const std::string flag = text;
    if (flag != "0" && flag != "1")
      throw Error(std::string(kCoordinatorOnlyVariable) + "='" + flag + "': expected 0 or 1");
    options.coordinator_runs_trials = flag == "0";
  }
  return options;
}

}  // namespace sweep::cluster
