/*
 * heartbeat.h — keeps a claimed job's lease alive from a thread of its own, and says when the job
 * must stop.
 *
 * The decision: the heartbeat never stops the run itself; it only sets the stop flag that the run
 * loop polls (RunOptions::stop), so trials end the way Ctrl-C ends them: each writes its
 * checkpoint and ends `interrupted`. It sets the flag when the job was cancelled, when the lease
 * was lost (reclaimed by another worker), when it could not renew the lease for a whole lease
 * period (the database is unreachable: assume another worker takes over), or when the worker
 * was asked to shut down.
 *
 * Thread safety: loss() may be called from any thread; construct and destroy on one.
 */
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "common/own_file_stream.h"
#include "store/store.h"

namespace sweep::queue {

enum class StopCause { none, cancelled, lease_lost, worker_stopping };
std::string_view describe(StopCause cause);

struct HeartbeatTiming {
  double lease_s = 10;    // how long a claim stays valid without a heartbeat
  double interval_s = 2;  // how often the lease is renewed; shorter than lease_s
};

// How often the heartbeat thread wakes to look at the clock, the cancel flag and the worker's
// signals. A renewal is due at most this late, so an interval shorter than one tick cannot be
// kept (worker.h's kMinHeartbeatS).
inline constexpr std::chrono::milliseconds kHeartbeatTick{100};

class Heartbeat {
 public:
  // `shutting_down` is polled a few times a second (the worker's SIGTERM / Ctrl-C). Why the job
  // stops is appended to `log_path` (its own O_APPEND stream, never through a symbolic link: the
  // run writes there too, from other threads, and whole lines interleave safely).
  Heartbeat(Store& queue, std::int64_t job_id, std::string owner, HeartbeatTiming timing,
            std::atomic<bool>& stop, std::function<bool()> shutting_down,
            const std::filesystem::path& log_path);
  ~Heartbeat();  // stops and joins the thread
  Heartbeat(const Heartbeat&) = delete;
  Heartbeat& operator=(const Heartbeat&) = delete;

  StopCause cause() const { return cause_.load(); }

 private:
  void loop();
  void stop_with(StopCause cause, const std::string& why);

  Store& queue_;
  const std::int64_t job_id_;
  const std::string owner_;
  const HeartbeatTiming timing_;
  std::atomic<bool>& stop_;
  std::function<bool()> shutting_down_;
  OwnFileStream log_;  // a file of sweep's own: never through a symbolic link
  std::atomic<StopCause> cause_{StopCause::none};
  std::mutex mutex_;
  std::condition_variable wake_;
  bool quit_ = false;
  std::thread thread_;
};

}  // namespace sweep::queue
