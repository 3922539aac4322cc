/*
 * trial_files.h — a trial's directory as files that travel: read them all (relative names), write
 * one atomically. Only rank 0 writes the sweep's own directory; a host keeps a private copy of
 * each trial's directory while the trial runs there.
 */
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "cluster/messages.h"

namespace sweep::cluster {

// Every regular file under `dir` (recursively), named relative to it; none when `dir` is absent.
std::vector<TrialFile> read_trial_files(const std::filesystem::path& dir);
TrialFile read_trial_file(const std::filesystem::path& dir, const std::string& name);

// Writes dir/name through a temporary file and a rename, so a crash leaves the old file or the
// new one, never half of one. Refuses a name that would leave `dir` (absolute, or with "..").
void write_trial_file(const std::filesystem::path& dir, const TrialFile& file);

}  // namespace sweep::cluster
