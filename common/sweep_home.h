/*
 * sweep_home.h — where sweep keeps what outlives a run on this machine: the queue (queue.db and
 * beside it workers/ and logs/), the tuning cache of timed kernel choices (tuning.tsv) and the
 * decoded image folders of `dataset: folder` (cache/folders/, trainer/data/decode_cache.h).
 */
#pragma once

#include <cstdlib>
#include <filesystem>
#include <optional>

namespace sweep {

// $SWEEP_HOME, else ~/.sweep; none when neither SWEEP_HOME nor HOME is set (or both are empty).
inline std::optional<std::filesystem::path> sweep_home() {
  if (const char* home = std::getenv("SWEEP_HOME"); home && *home)
    return std::filesystem::path(home);
  if (const char* user = std::getenv("HOME"); user && *user)
    return std::filesystem::path(user) / ".sweep";
  return std::nullopt;
}

}  // namespace sweep
