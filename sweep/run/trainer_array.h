/*
 * trainer_array.h — the built-in trainer's fused arrays as a scheduler ArrayFn: same-shape trials
 * (trainer/array/fusion.h) trained together on one slot by trainer::train_array, each member
 * still a whole trial (its reports, log, checkpoint, stops and outcome are those of
 * make_trainer_trial's trial, through the same pieces of trainer_trial.h).
 */
#pragma once

#include <cstdint>
#include <map>

#include "scheduler/trial.h"
#include "sweep/run/trainer_trial.h"

namespace sweep::run {

// `inputs` by trial id (TrialSpec::id): the members the executor hands the function are looked up
// there. A member whose config cannot be resolved fails alone with the message.
scheduler::ArrayFn make_trainer_array(std::map<std::int64_t, TrainerTrialInput> inputs);

}  // namespace sweep::run
