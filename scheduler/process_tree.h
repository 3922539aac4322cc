/*
 * process_tree.h — every process that belongs to one external trial, found and ended.
 *
 * Signalling the trial's process group misses what left it: a child that called setsid, or a
 * daemon that double-forked (its parent exits, it is re-parented to init). So each trial's
 * environment carries a token (SWEEP_TRIAL_TOKEN=...), inherited by every descendant, and a
 * trial's processes are the descendants of its program (by parent pid) plus every process of
 * ours whose environment holds the token. What is not caught: a process that both clears its
 * environment and re-parents itself away (as a deliberate daemon would); `sweep` cannot tell it
 * from any other process of the user's.
 *
 * Linux only (reads /proc). Thread-safe: no shared state.
 */
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace sweep::scheduler::detail {

// A token no other trial of any process shares ("SWEEP_TRIAL_TOKEN=<pid>-<n>-<random>").
std::string new_trial_token_entry();

// The live (not zombie) processes of a trial: descendants of `root` and holders of `token_entry`
// ("KEY=value" as it stands in their environment). `root` itself is included while it lives.
std::vector<pid_t> trial_processes(pid_t root, const std::string& token_entry);

// Sends `signal` to the trial's processes; returns how many were signalled.
std::size_t signal_trial(pid_t root, const std::string& token_entry, int signal);

// SIGKILL to every process holding a token this process made (new_trial_token_entry): what a
// sweep that quits at once leaves of its external trials, their setsid'd children included.
// Returns how many were signalled.
std::size_t kill_processes_of_our_trials();

// SIGTERM to every process but ours whose environment holds `entry` ("KEY=value"), up to
// `grace_s` for them to go, SIGKILL to what is left. Returns how many there were.
std::size_t end_processes_holding(const std::string& entry, double grace_s);

// SIGTERM to the trial's processes, up to `grace_s` for them to go, SIGKILL to what is left;
// until none is left (bounded: a few rounds). Our own direct child is not reaped here.
void end_trial_processes(pid_t root, const std::string& token_entry, double grace_s);

}  // namespace sweep::scheduler::detail
