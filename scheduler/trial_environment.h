/*
 * trial_environment.h — the environment variables an external-command trial's program is given,
 * named in this one place. The Python helper (python/sweep_trial.py) and the table of
 * docs/running-trials.md read these names; a test checks that every one of them reaches the
 * program.
 *
 * The command trial itself (command_trial.cpp) sets what the scheduler knows of the trial: its
 * id, number, name, directory and device (and CUDA_VISIBLE_DEVICES, SWEEP_TRIAL_TOKEN). The run
 * glue (sweep/run/command_environment.h) adds what only the sweep knows: the parameters as JSON,
 * the sweep's name and the trial's seed, and PYTHONPATH with the helper's directory in front.
 */
#pragma once

namespace sweep::scheduler {

inline constexpr const char* kTrialIdVariable = "SWEEP_TRIAL_ID";          // the store's id
inline constexpr const char* kTrialNumberVariable = "SWEEP_TRIAL_NUMBER";  // 0-based, in the sweep
inline constexpr const char* kTrialNameVariable = "SWEEP_TRIAL_NAME";      // "lr=0.01 bs=64"
inline constexpr const char* kTrialDirVariable = "SWEEP_TRIAL_DIR";        // its own directory
inline constexpr const char* kDeviceVariable = "SWEEP_DEVICE";             // "cpu:0", "cuda:1"

inline constexpr const char* kParamsVariable = "SWEEP_PARAMS";  // {"training.learning_rate": 0.01}
inline constexpr const char* kSweepNameVariable = "SWEEP_SWEEP_NAME";
inline constexpr const char* kTrialSeedVariable = "SWEEP_TRIAL_SEED";
// The sweep's directory, absolute: a resume ends the processes that still hold it, left by a run
// of the sweep that was killed before it could end them (run_sweep.cpp).
inline constexpr const char* kSweepDirVariable = "SWEEP_SWEEP_DIR";

}  // namespace sweep::scheduler
