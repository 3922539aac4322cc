/*
 * in_process_transport.h — N ranks as N Transports in one process, for tests: the coordinator
 * and the hosts run on threads of one test binary (and so under ThreadSanitizer), with the same
 * ordering rules as MPI. silence(rank) drops everything a rank sends from then on: a rank that
 * stops answering, without a real process to freeze.
 *
 *   InProcessFabric fabric(3);
 *   std::thread host([&] { serve(fabric.rank(1), ...); });
 *   Coordinator coordinator(fabric.rank(0), ...);
 */
#pragma once

#include <memory>
#include <vector>

#include "cluster/transport.h"

namespace sweep::cluster {

class InProcessFabric {
 public:
  explicit InProcessFabric(int ranks);
  ~InProcessFabric();
  InProcessFabric(const InProcessFabric&) = delete;
  InProcessFabric& operator=(const InProcessFabric&) = delete;

  Transport& rank(int r);
  void silence(int r);  // from now on, nothing `r` sends arrives anywhere

  struct Shared;

 private:
  std::shared_ptr<Shared> shared_;
  std::vector<std::unique_ptr<Transport>> ranks_;
};

}  // namespace sweep::cluster
