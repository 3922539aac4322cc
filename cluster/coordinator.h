/*
 * coordinator.h — rank 0 of a sweep over several processes: it knows every rank and what it has,
 * and turns a slot on another rank into a trial that runs there.
 *
 * Remote is a kind of slot, not a second executor: the coordinator's Executor has every rank's
 * devices as slots (Device::rank), and each trial's TrialFn is place(local, remote). On a rank-0
 * slot that is the ordinary trial; on another rank's slot it is a relay: it sends the trial
 * (Run), then, on the executor's own worker thread, replays what the host sends back into the
 * TrialContext in order — metrics (so stopping rules, callbacks and the store see them as from a
 * local trial), log lines, progress, files (written into the trial's directory here) — and
 * returns the host's outcome. A stop of the trial (ASHA, cancel, Ctrl-C, timeout) is sent to the
 * host as it happens. Because one thread replays one trial's messages in the order the host sent
 * them, an epoch's metrics are in the store before that epoch's checkpoint file is written here,
 * exactly as for a local trial.
 *
 * A rank that says nothing (not even its 1 s heartbeat) for ClusterOptions::rank_timeout_s is
 * lost: lost() says so, its trials end `interrupted` with that reason (resume continues them from
 * the last checkpoint that reached rank 0), and the caller ends the job (abort()): a clean end
 * would wait on the silent rank forever.
 *
 *   Coordinator coordinator(transport, cluster_options_from_environment());
 *   coordinator.open(devices_by_rank, cpu_slots, trials_per_gpu);
 *   executor.submit(spec, coordinator.place(local_fn, [] { return RemoteTrial{...}; }));
 *   ...
 *   coordinator.close();
 */
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cluster/launch.h"
#include "cluster/messages.h"
#include "cluster/transport.h"
#include "scheduler/trial.h"

namespace sweep::cluster {

// What a trial needs to run on another rank: the host's TrialFactory `kind` builds it from
// `payload`; the files of `trial_dir` (here) travel with it and those it writes travel back.
struct RemoteTrial {
  std::string kind;
  sweep::Json payload = sweep::Json::object();
  std::string trial_dir;
  std::vector<std::string> files;  // which of its files travel out with it; empty: all of them
  // How many epochs it trains, when known (0 = unknown): set on rank 0's TrialContext, where the
  // stopping rules run, so no rule stops a remote trial at its last epoch either.
  std::int64_t epochs = 0;
};

class Coordinator {
 public:
  // Starts the transport and waits (up to rank_timeout_s) for every rank's Hello; throws
  // sweep::Error naming the ranks that did not answer. Call on rank 0 only.
  Coordinator(Transport& transport, ClusterOptions options);
  // Tells every host to shut down and stops the transport.
  ~Coordinator();
  Coordinator(const Coordinator&) = delete;
  Coordinator& operator=(const Coordinator&) = delete;

  int size() const { return static_cast<int>(hellos_.size()); }
  const ClusterOptions& options() const { return options_; }
  // Every rank's Hello, by rank (rank 0's is this process's own).
  const std::vector<Hello>& ranks() const { return hellos_; }
  std::string describe_rank(int rank) const;  // "rank 2 (node07)"

  // The slots of one sweep: each host gets its own devices (Device::rank = its rank; sent as the
  // host's own indices). Until close().
  void open(const std::vector<scheduler::Device>& devices, int cpu_slots, int trials_per_gpu);
  // After the executor finished every trial: hosts drop their slots (bounded wait for them).
  void close();

  // A trial that runs `local` on a rank-0 slot and is relayed to its host on any other.
  // `remote` is called when the trial starts on another rank (it may read the store, etc.).
  scheduler::TrialFn place(scheduler::TrialFn local, std::function<RemoteTrial()> remote);

  // Why the job cannot go on ("rank 2 (node07) stopped answering for 60 s"), or "".
  // Thread-safe; also notices a rank silent for too long.
  std::string lost();
  [[noreturn]] void abort(int exit_code);

  struct Mailbox;

 private:
  void receive(int source, std::string_view bytes);
  scheduler::TrialOutcome relay(scheduler::TrialContext& context, const RemoteTrial& trial);
  void check_silence_locked();  // marks a rank lost when it has been silent too long
  void broadcast(const Message& message);

  Transport& transport_;
  const ClusterOptions options_;
  std::vector<Hello> hellos_;

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<bool> said_hello_;
  std::vector<std::chrono::steady_clock::time_point> last_heard_;
  std::map<std::int64_t, std::shared_ptr<Mailbox>> mailboxes_;
  int closed_ = 0;
  bool open_ = false;
  std::string lost_;
  std::vector<std::string> damaged_;  // messages that could not be read, for the lost reason
};

}  // namespace sweep::cluster
