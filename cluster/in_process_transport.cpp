/*
 * in_process_transport.cpp — each rank an inbox and a delivery thread; send() appends to the
 * destination's inbox at once, so per-pair order is the order of send() calls, as with MPI.
 */
#include "cluster/in_process_transport.h"

#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "common/check.h"

namespace sweep::cluster {

struct InProcessFabric::Shared {
  struct Inbox {
    std::mutex mutex;
    std::condition_variable cv;
    std::deque<std::pair<int, std::string>> messages;
    bool stopping = false;
  };
  explicit Shared(int n)
      : inboxes(static_cast<std::size_t>(n)), silenced(static_cast<std::size_t>(n)) {
    for (auto& s : silenced) s = false;
  }
  std::vector<Inbox> inboxes;
  std::vector<std::atomic<bool>> silenced;
};

namespace {

class InProcessTransport : public Transport {
 public:
  InProcessTransport(std::shared_ptr<InProcessFabric::Shared> shared, int rank)
      : shared_(std::move(shared)), rank_(rank) {}
  ~InProcessTransport() override { stop(); }

  int rank() const override { return rank_; }
  int size() const override { return static_cast<int>(shared_->inboxes.size()); }
  std::string hostname() const override { return "localhost"; }
  int local_rank() const override { return rank_; }
  int local_size() const override { return size(); }

  void start(Receiver receiver) override {
    thread_ = std::thread([this, receiver = std::move(receiver)] {
      auto& inbox = shared_->inboxes[static_cast<std::size_t>(rank_)];
      std::unique_lock lock(inbox.mutex);
      for (;;) {
        inbox.cv.wait(lock, [&] { return inbox.stopping || !inbox.messages.empty(); });
        if (inbox.messages.empty()) return;
        auto [source, message] = std::move(inbox.messages.front());
        inbox.messages.pop_front();
        lock.unlock();
        receiver(source, message);
        lock.lock();
      }
    });
  }

  void send(int dest, std::string message) override {
    if (dest < 0 || dest >= size()) throw Error("cluster: no rank " + std::to_string(dest));
    if (shared_->silenced[static_cast<std::size_t>(rank_)]) return;
    auto& inbox = shared_->inboxes[static_cast<std::size_t>(dest)];
    {
      std::lock_guard lock(inbox.mutex);
      inbox.messages.emplace_back(rank_, std::move(message));
    }
    inbox.cv.notify_one();
  }

  void stop() override {
    auto& inbox = shared_->inboxes[static_cast<std::size_t>(rank_)];
    {
      std::lock_guard lock(inbox.mutex);
      inbox.stopping = true;
    }
    inbox.cv.notify_all();
    if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) thread_.join();
  }

  [[noreturn]] void abort(int exit_code) override {
    throw Error("cluster: rank " + std::to_string(rank_) + " aborted the job with code " +
                std::to_string(exit_code));
  }

 private:
  std::shared_ptr<InProcessFabric::Shared> shared_;
  const int rank_;
  std::thread thread_;
};

}  // namespace

InProcessFabric::InProcessFabric(int ranks) : shared_(std::make_shared<Shared>(ranks)) {
  for (int r = 0; r < ranks; ++r)
    ranks_.push_back(std::make_unique<InProcessTransport>(shared_, r));
}

InProcessFabric::~InProcessFabric() {
  for (auto& r : ranks_) r->stop();
}

Transport& InProcessFabric::rank(int r) { return *ranks_.at(static_cast<std::size_t>(r)); }

void InProcessFabric::silence(int r) { shared_->silenced.at(static_cast<std::size_t>(r)) = true; }

}  // namespace sweep::cluster
