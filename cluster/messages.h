/*
 * messages.h — everything ranks say to each other, one struct per message, and their encoding.
 *
 * The coordinator (rank 0) sends Open (this sweep's slots), Run (a trial: its spec, what kind of
 * trial it is and that kind's payload, the files of its directory), Stop, Close and Shutdown. A
 * host (rank > 0) answers Hello once, then Heartbeat, Metric, Log, Progress, File and Finished
 * for its trials, and Closed. A message is one type byte and its fields (wire.h); a frame, what
 * one MPI send carries, is any number of messages each prefixed by its length, so a host's
 * burst of metric points crosses in one send.
 */
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "common/json.h"
#include "scheduler/trial.h"

namespace sweep::cluster {

// A file of a trial's directory, by its path relative to that directory.
struct TrialFile {
  std::string name;
  std::string bytes;
};

// host → coordinator, once, as soon as the host runs: what it has.
struct Hello {
  std::string hostname;
  int local_rank = 0;  // among the ranks on its node
  int local_size = 1;
  int cuda_devices = 0;  // visible to the process; 0 when the CUDA backend was not built
  bool cuda_built = false;
  std::int64_t pid = 0;
};
struct Heartbeat {};

// coordinator → host: the slots it will be given trials on, until Close.
struct Open {
  std::vector<scheduler::Device> devices;  // the host's own indices (rank 0)
  int cpu_slots = 1;
  int trials_per_gpu = 1;
};
struct Run {
  scheduler::TrialSpec spec;  // placement: the host's own devices
  std::string kind;           // which TrialFactory builds it (host.h)
  sweep::Json payload;        // that factory's input
  std::vector<TrialFile> files;
};
struct Stop {
  std::int64_t trial_id = 0;
  scheduler::StopKind kind = scheduler::StopKind::none;
  std::string reason;
};
struct Close {};
struct Shutdown {};

// host → coordinator, about one trial.
struct Metric {
  std::int64_t trial_id = 0;
  scheduler::MetricPoint point;
};
struct Log {
  std::int64_t trial_id = 0;
  std::string line;
};
struct Progress {
  std::int64_t trial_id = 0;
  double fraction = 0;
  std::string text;
};
struct File {
  std::int64_t trial_id = 0;
  TrialFile file;
};
struct Finished {
  std::int64_t trial_id = 0;
  scheduler::TrialOutcome outcome;
};
struct Closed {};

using Message = std::variant<Hello, Heartbeat, Open, Run, Stop, Close, Shutdown, Metric, Log,
                             Progress, File, Finished, Closed>;

std::string encode(const Message& message);
Message decode(std::string_view bytes);  // throws sweep::Error on a damaged message

// A frame: messages, each prefixed by its length.
void append_to_frame(std::string& frame, std::string_view message);
// Calls `each(message bytes)` in order; throws sweep::Error on a damaged frame.
template <class Each>
void for_each_in_frame(std::string_view frame, Each&& each);

// The type's name, for messages to people ("an unexpected Run").
std::string_view name_of(const Message& message);

}  // namespace sweep::cluster

#include "cluster/frame_impl.h"
