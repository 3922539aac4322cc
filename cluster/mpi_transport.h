/*
 * mpi_transport.h — the Transport of a real MPI job (built only with MPI: SWEEP_HAVE_MPI).
 *
 * MpiSession is MPI_Init_thread / MPI_Finalize as one object, asking for MPI_THREAD_SERIALIZED:
 * all calls come from the transport's own thread between the two (transport.h). Errors come back
 * as codes (MPI_ERRORS_RETURN on the world communicator) and throw through SWEEP_CHECK_MPI with
 * MPI's own text, instead of MPI's default of killing the job without a word.
 *
 *   MpiSession session(argc, argv);
 *   if (session.size() > 1) { MpiTransport transport(session); ... }
 */
#pragma once

#include <memory>
#include <string>

#include "cluster/transport.h"

namespace sweep::cluster {

class MpiSession {
 public:
  MpiSession(int& argc, char**& argv);
  ~MpiSession();  // MPI_Finalize
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }

 private:
  int rank_ = 0, size_ = 1;
};

class MpiTransport : public Transport {
 public:
  explicit MpiTransport(const MpiSession& session);
  ~MpiTransport() override;

  int rank() const override;
  int size() const override;
  std::string hostname() const override;
  int local_rank() const override;
  int local_size() const override;
  void start(Receiver receiver) override;
  void send(int dest, std::string message) override;
  void stop() override;
  [[noreturn]] void abort(int exit_code) override;

  struct State;

 private:
  std::unique_ptr<State> state_;
};

}  // namespace sweep::cluster
