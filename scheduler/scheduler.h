/*
 * scheduler.h — the scheduler's public surface in one include: devices and slots, the executor and
 * its futures, event sinks, stopping policies, external-command trials. Nothing here knows the
 * trainer, YAML or SQLite; they plug in as a TrialFn and as EventSinks.
 */
#pragma once

#include "scheduler/command_trial.h"
#include "scheduler/device.h"
#include "scheduler/event_sink.h"
#include "scheduler/executor.h"
#include "scheduler/futures.h"
#include "scheduler/metric_point.h"
#include "scheduler/stopping/asha.h"
#include "scheduler/stopping/hyperband.h"
#include "scheduler/stopping/median_rule.h"
#include "scheduler/stopping/stopping_policy.h"
#include "scheduler/trial.h"
#include "scheduler/trial_future.h"
