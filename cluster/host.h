/*
 * host.h — a rank other than 0: it offers its devices and runs the trials the coordinator sends.
 *
 * Every rank runs the same program, so a trial travels as a kind and a payload, and each rank
 * has the same TrialFactories to turn them back into a TrialFn (the sweep CLI registers its
 * built-in trainer and external-command trials; a C++ program registers its own). The host runs
 * trials through an ordinary Executor whose slots mirror the ones the coordinator gave it (each
 * trial pinned to the device the coordinator chose: TrialSpec::placement) and forwards every
 * event back. Trials write into a private directory per trial (under $TMPDIR): the files the
 * coordinator sent (a checkpoint to resume from) are put there first; a file the trial says it
 * wrote (a checkpoint) travels back at once, and at the end every file it changed travels back
 * before the outcome, so rank 0 holds all of it when it records the trial's end.
 *
 *   TrialFactories factories;
 *   factories["my.kind"] = [](const RemoteTrialInput& in) { return make_my_trial(in.payload); };
 *   if (transport.rank() != 0) return serve(transport, HostFacts{}, factories, options);
 */
#pragma once

#include <functional>
#include <map>
#include <string>

#include "cluster/launch.h"
#include "cluster/transport.h"
#include "common/json.h"
#include "scheduler/trial.h"

namespace sweep::cluster {

struct RemoteTrialInput {
  scheduler::TrialSpec spec;
  sweep::Json payload;
  std::string trial_dir;  // this host's private directory for the trial
  // Call after writing a file under trial_dir that rank 0 must have at once (a checkpoint);
  // `name` relative to trial_dir. Thread-safe.
  std::function<void(const std::string& name)> file_written;
};

using TrialFactory = std::function<scheduler::TrialFn(const RemoteTrialInput&)>;
using TrialFactories = std::map<std::string, TrialFactory>;

struct HostFacts {
  int cuda_devices = 0;
  bool cuda_built = false;
};

// Runs until the coordinator says Shutdown; returns the process's exit status (0).
int serve(Transport& transport, const HostFacts& facts, const TrialFactories& factories,
          const ClusterOptions& options);

}  // namespace sweep::cluster
