/*
 * transport.h — how ranks' messages travel: one interface, MPI behind it in a real job
 * (mpi_transport.h) and an in-process one for tests (in_process_transport.h), which is how the
 * coordinator and host logic run under ThreadSanitizer without mpirun.
 *
 * The one non-obvious decision: a transport owns ONE thread that makes every call into the
 * messaging library, so MPI needs only MPI_THREAD_SERIALIZED and no caller ever blocks on the
 * network. send() only queues; the thread sends what is queued for a rank as one frame, in the
 * order send() was called, and hands what arrives to the receiver on that same thread, message
 * by message, in the order the sender sent them (MPI's non-overtaking rule, kept by one tag and
 * one communicator). A receiver must be quick: it queues the message for whoever handles it.
 */
#pragma once

#include <functional>
#include <string>
#include <string_view>

namespace sweep::cluster {

class Transport {
 public:
  // (source rank, one message's bytes); called on the transport's thread.
  using Receiver = std::function<void(int source, std::string_view message)>;

  virtual ~Transport() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual std::string hostname() const = 0;
  virtual int local_rank() const = 0;  // among the ranks of this node
  virtual int local_size() const = 0;

  // Starts the thread; messages that arrived before are held until then. Call once.
  virtual void start(Receiver receiver) = 0;
  // Queues one message (encode()d) for `dest`. Thread-safe; never blocks on the network.
  virtual void send(int dest, std::string message) = 0;
  // Sends what is queued, then stops the thread. Idempotent.
  virtual void stop() = 0;
  // Ends the whole job at once (a rank that stopped answering would make a clean end hang).
  [[noreturn]] virtual void abort(int exit_code) = 0;
};

}  // namespace sweep::cluster
