/*
 * mpi_transport.cpp — one thread polls MPI: it sends each rank's queued frame with MPI_Isend,
 * completes sends with MPI_Test, and receives with MPI_Iprobe + MPI_Recv (sizes vary, so a probe
 * tells the size first). Idle, it sleeps in short, growing waits (50 µs to 500 µs) that a send()
 * cuts short: the latency of a trial's round trip stays well under a millisecond without
 * spinning a core, which matters when ranks share a node with the trials they run.
 */
#include "cluster/mpi_transport.h"

#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <condition_variable>
#include <cstdio>
#include <list>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "cluster/messages.h"
#include "common/check.h"

namespace sweep::cluster {

namespace {
constexpr int kTag = 7;                       // every sweep message; one tag keeps them in order
constexpr std::size_t kMaxFrame = 64u << 20;  // a bigger queue is sent as several frames
}  // namespace

MpiSession::MpiSession(int& argc, char**& argv) {
  int provided = 0;
  SWEEP_CHECK_MPI(MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided));
  if (provided < MPI_THREAD_SERIALIZED)
    throw Error("MPI: this MPI library offers thread level " + std::to_string(provided) +
                ", sweep needs MPI_THREAD_SERIALIZED");
  SWEEP_CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  SWEEP_CHECK_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank_));
  SWEEP_CHECK_MPI(MPI_Comm_size(MPI_COMM_WORLD, &size_));
}

MpiSession::~MpiSession() { SWEEP_LOG_ON_ERROR(MPI_Finalize() == MPI_SUCCESS, "MPI_Finalize"); }

struct MpiTransport::State {
  int rank = 0, size = 1, local_rank = 0, local_size = 1;
  std::string hostname;

  std::mutex mutex;
  std::condition_variable cv;
  std::map<int, std::string> outbox;  // dest → frame; guarded by mutex
  bool stopping = false;
  std::thread thread;

  struct InFlight {
    MPI_Request request = MPI_REQUEST_NULL;
    std::string frame;
  };

  void loop(const Receiver& receiver) {
    std::list<InFlight> in_flight;  // a list: Isend holds the buffer's address
    std::string inbound;
    auto idle = std::chrono::microseconds(50);
    std::chrono::steady_clock::time_point stop_deadline{};
    for (;;) {
      bool busy = false;
      std::map<int, std::string> frames;
      bool stop_now = false;
      {
        std::lock_guard lock(mutex);
        frames.swap(outbox);
        stop_now = stopping;
      }
      for (auto& [dest, frame] : frames) {
        auto& sending = in_flight.emplace_back();
        sending.frame = std::move(frame);
        SWEEP_CHECK_MPI(MPI_Isend(sending.frame.data(), static_cast<int>(sending.frame.size()),
                                  MPI_BYTE, dest, kTag, MPI_COMM_WORLD, &sending.request));
        busy = true;
      }
      for (auto it = in_flight.begin(); it != in_flight.end();) {
        int done = 0;
        SWEEP_CHECK_MPI(MPI_Test(&it->request, &done, MPI_STATUS_IGNORE));
        it = done ? in_flight.erase(it) : std::next(it);
      }
      for (;;) {
        int flag = 0;
        MPI_Status status;
        SWEEP_CHECK_MPI(MPI_Iprobe(MPI_ANY_SOURCE, kTag, MPI_COMM_WORLD, &flag, &status));
        if (!flag) break;
        int count = 0;
        SWEEP_CHECK_MPI(MPI_Get_count(&status, MPI_BYTE, &count));
        inbound.resize(static_cast<std::size_t>(count));
        SWEEP_CHECK_MPI(MPI_Recv(inbound.data(), count, MPI_BYTE, status.MPI_SOURCE, kTag,
                                 MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        for_each_in_frame(inbound, [&](std::string_view m) { receiver(status.MPI_SOURCE, m); });
        busy = true;
      }
      if (stop_now && frames.empty()) {
        // Queued messages are out; wait (boundedly: a dead peer never completes) for delivery.
        if (stop_deadline == std::chrono::steady_clock::time_point{})
          stop_deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        if (in_flight.empty() || std::chrono::steady_clock::now() > stop_deadline) return;
      }
      if (busy) {
        idle = std::chrono::microseconds(50);
        continue;
      }
      std::unique_lock lock(mutex);
      cv.wait_for(lock, idle, [&] { return !outbox.empty() || stopping; });
      idle = std::min(idle * 2, std::chrono::microseconds(500));
    }
  }
};

MpiTransport::MpiTransport(const MpiSession& session) : state_(std::make_unique<State>()) {
  auto& s = *state_;
  s.rank = session.rank();
  s.size = session.size();
  MPI_Comm node;
  SWEEP_CHECK_MPI(
      MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, s.rank, MPI_INFO_NULL, &node));
  SWEEP_CHECK_MPI(MPI_Comm_rank(node, &s.local_rank));
  SWEEP_CHECK_MPI(MPI_Comm_size(node, &s.local_size));
  SWEEP_CHECK_MPI(MPI_Comm_free(&node));
  char name[MPI_MAX_PROCESSOR_NAME];
  int length = 0;
  SWEEP_CHECK_MPI(MPI_Get_processor_name(name, &length));
  s.hostname.assign(name, static_cast<std::size_t>(length));
}

MpiTransport::~MpiTransport() { stop(); }

int MpiTransport::rank() const { return state_->rank; }
int MpiTransport::size() const { return state_->size; }
std::string MpiTransport::hostname() const { return state_->hostname; }
int MpiTransport::local_rank() const { return state_->local_rank; }
int MpiTransport::local_size() const { return state_->local_size; }

void MpiTransport::start(Receiver receiver) {
  state_->thread = std::thread([s = state_.get(), receiver = std::move(receiver)] {
    try {
      s->loop(receiver);
    } catch (const std::exception& e) {
      // The transport is how this rank hears anything: without it the job cannot go on.
      std::fprintf(stderr, "sweep: rank %d: the MPI transport failed: %s\n", s->rank, e.what());
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
  });
}

void MpiTransport::send(int dest, std::string message) {
  if (dest < 0 || dest >= state_->size) throw Error("cluster: no rank " + std::to_string(dest));
  if (message.size() > kMaxFrame)
    throw Error("cluster: a message of " + std::to_string(message.size() >> 20) +
                " MiB is larger than the " + std::to_string(kMaxFrame >> 20) +
                " MiB one message may be (a trial file that large cannot travel)");
  {
    std::lock_guard lock(state_->mutex);
    std::string& frame = state_->outbox[dest];
    append_to_frame(frame, message);
  }
  state_->cv.notify_one();
}

void MpiTransport::stop() {
  {
    std::lock_guard lock(state_->mutex);
    state_->stopping = true;
  }
  state_->cv.notify_all();
  if (state_->thread.joinable()) state_->thread.join();
}

void MpiTransport::abort(int exit_code) {
  std::fflush(stdout);
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, exit_code);
  std::_Exit(exit_code);
}

}  // namespace sweep::cluster
