/*
 * command_check.h — is the program an external trainer's command names where the command says?
 *
 * A command whose script is not where it says (`python3 train.py` run from another directory)
 * would pass every other check and then fail every trial with "can't open file". Before anything
 * runs, the program (a path, or a name on PATH) and, for an interpreter (python, bash, Rscript,
 * node, ...), its script are looked up from the directory sweep runs in, which is the directory
 * each trial's command starts in. Words with {placeholders} are not checked (their value is
 * only known per trial).
 */
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace sweep::config {

// "" when the program and its script are there; else what is missing and from where it was
// looked for, ready for a config message.
std::string check_command_files(const std::vector<std::string>& argv,
                                const std::filesystem::path& working_dir);

}  // namespace sweep::config
