/*
 * job_runner.h — one claimed job from claim to its final row in the queue.
 *
 * The decision: the job's outcome follows `sweep run`'s exit status (0 → done; a failed trial or
 * a sweep that cannot start → failed with the reason in the job's error), and the runner never
 * throws: whatever goes wrong with one job is recorded on that job, and the worker goes on with
 * the next one.
 */
#pragma once

#include <atomic>
#include <functional>
#include <string>

#include "store/store.h"
#include "sweep/queue/queue_paths.h"
#include "sweep/queue/worker.h"

namespace sweep::queue {

struct JobRunContext {
  Store& queue;
  const QueuePaths& paths;
  const WorkerOptions& worker;
  std::string owner;                    // the lease owner "host:pid:random"
  std::function<bool()> shutting_down;  // the worker got SIGTERM / SIGINT
};

// Returns how the job ended for this worker (StopCause::none: it ran to its end here).
StopCause run_claimed_job(const JobRunContext& context, const JobRow& job);

}  // namespace sweep::queue
