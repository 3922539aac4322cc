/*
 * coordinator.cpp — hellos, the per-trial mailboxes the transport thread fills, the relay that
 * empties them on the trial's worker thread, and the silence check.
 */
#include "cluster/coordinator.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <stop_token>
#include <thread>

#include "cluster/trial_files.h"
#include "common/check.h"
#include "common/format.h"

namespace sweep::cluster {

using Clock = std::chrono::steady_clock;

// One trial's messages, filled by the transport thread, emptied by the trial's relay thread. Its
// own lock and wake-up, so a burst of metric points for one trial wakes only that trial.
struct Coordinator::Mailbox {
  std::mutex mutex;
  std::condition_variable cv;
  std::deque<Message> messages;
  bool poked = false;  // a stop was requested or a rank was lost: look again

  void poke() {
    {
      std::lock_guard lock(mutex);
      poked = true;
    }
    cv.notify_one();
  }
};

namespace {
std::chrono::duration<double> seconds(double s) { return std::chrono::duration<double>(s); }

std::string own_hostname() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "localhost";
  return name;
}
}  // namespace

Coordinator::Coordinator(Transport& transport, ClusterOptions options)
    : transport_(transport), options_(options) {
  if (transport.rank() != 0) throw Error("cluster: the coordinator runs on rank 0");
  const auto n = static_cast<std::size_t>(transport.size());
  hellos_.resize(n);
  said_hello_.assign(n, false);
  last_heard_.assign(n, Clock::now());
  hellos_[0].hostname = transport.hostname().empty() ? own_hostname() : transport.hostname();
  hellos_[0].local_rank = transport.local_rank();
  hellos_[0].local_size = transport.local_size();
  hellos_[0].pid = ::getpid();
  said_hello_[0] = true;
  transport_.start([this](int source, std::string_view bytes) { receive(source, bytes); });

  std::unique_lock lock(mutex_);
  const bool all = changed_.wait_for(lock, seconds(options_.rank_timeout_s), [&] {
    return std::all_of(said_hello_.begin(), said_hello_.end(), [](bool b) { return b; });
  });
  if (!all) {
    std::string missing;
    for (std::size_t r = 0; r < n; ++r)
      if (!said_hello_[r]) missing += (missing.empty() ? "" : ", ") + std::to_string(r);
    lock.unlock();
    transport_.stop();
    throw Error("cluster: rank(s) " + missing + " did not start within " +
                shortest(options_.rank_timeout_s) + " s (" + kRankTimeoutVariable +
                " sets the limit)");
  }
}

Coordinator::~Coordinator() {
  try {
    broadcast(Shutdown{});
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sweep: could not tell the other ranks to stop: %s\n", e.what());
  }
  transport_.stop();
}

void Coordinator::abort(int exit_code) {
  transport_.abort(exit_code);
  std::_Exit(exit_code);  // not reached: Transport::abort does not return
}

std::string Coordinator::describe_rank(int rank) const {
  return "rank " + std::to_string(rank) + " (" +
         printable(hellos_.at(static_cast<std::size_t>(rank)).hostname) + ")";
}

void Coordinator::broadcast(const Message& message) {
  const std::string bytes = encode(message);
  for (int r = 1; r < size(); ++r) transport_.send(r, bytes);
}

void Coordinator::receive(int source, std::string_view bytes) {
  const auto r = static_cast<std::size_t>(source);
  if (r >= hellos_.size()) return;
  Message message;
  std::string damage;
  try {
    message = decode(bytes);
  } catch (const std::exception& e) {
    damage = e.what();
  }
  std::int64_t trial = -1;
  std::visit(
      [&](const auto& m) {
        if constexpr (requires { m.trial_id; }) trial = m.trial_id;
      },
      message);
  std::shared_ptr<Mailbox> mailbox;
  {
    std::lock_guard lock(mutex_);
    last_heard_[r] = Clock::now();
    if (!damage.empty()) {
      if (lost_.empty())
        lost_ = describe_rank(source) + " sent a message that could not be read: " + damage;
      for (auto& [id, box] : mailboxes_) box->poke();
    } else if (auto* hello = std::get_if<Hello>(&message)) {
      hellos_[r] = *hello;
      said_hello_[r] = true;
    } else if (std::holds_alternative<Closed>(message)) {
      ++closed_;
    } else if (trial >= 0 && !std::holds_alternative<Stop>(message)) {
      if (auto it = mailboxes_.find(trial); it != mailboxes_.end()) mailbox = it->second;
    }
  }
  if (mailbox) {
    {
      std::lock_guard lock(mailbox->mutex);
      mailbox->messages.push_back(std::move(message));
    }
    mailbox->cv.notify_one();
  } else {
    changed_.notify_all();  // hellos, closes, a damaged message
  }
}

void Coordinator::open(const std::vector<scheduler::Device>& devices, int cpu_slots,
                       int trials_per_gpu) {
  std::vector<Open> opens(hellos_.size());
  for (const auto& d : devices)
    if (d.remote()) opens.at(static_cast<std::size_t>(d.rank)).devices.push_back(d.on_rank(0));
  for (int r = 1; r < size(); ++r) {
    auto& o = opens[static_cast<std::size_t>(r)];
    o.cpu_slots = cpu_slots;
    o.trials_per_gpu = trials_per_gpu;
    transport_.send(r, encode(o));
  }
  std::lock_guard lock(mutex_);
  open_ = true;
  closed_ = 0;
}

void Coordinator::close() {
  broadcast(Close{});
  std::unique_lock lock(mutex_);
  open_ = false;
  if (!lost_.empty()) return;
  changed_.wait_for(lock, seconds(options_.rank_timeout_s),
                    [&] { return closed_ >= size() - 1 || !lost_.empty(); });
}

std::string Coordinator::lost() {
  std::lock_guard lock(mutex_);
  check_silence_locked();
  return lost_;
}

void Coordinator::check_silence_locked() {
  if (!lost_.empty()) return;
  const auto now = Clock::now();
  for (std::size_t r = 1; r < last_heard_.size() && lost_.empty(); ++r)
    if (now - last_heard_[r] > seconds(options_.rank_timeout_s))
      lost_ = describe_rank(static_cast<int>(r)) + " stopped answering for " +
              shortest(options_.rank_timeout_s) + " s";
  if (!lost_.empty()) {
    for (auto& [id, box] : mailboxes_) box->poke();
    changed_.notify_all();
  }
}

scheduler::TrialFn Coordinator::place(scheduler::TrialFn local,
                                      std::function<RemoteTrial()> remote) {
  return [this, local = std::move(local),
          remote = std::move(remote)](scheduler::TrialContext& context) {
    if (!context.device().remote()) return local(context);
    const RemoteTrial trial = remote();
    if (trial.epochs > 0) context.set_epochs(trial.epochs);
    return relay(context, trial);
  };
}

scheduler::TrialOutcome Coordinator::relay(scheduler::TrialContext& context,
                                           const RemoteTrial& trial) {
  const int rank = context.device().rank;
  const std::int64_t id = context.spec().id;
  auto mailbox = std::make_shared<Mailbox>();
  {
    std::lock_guard lock(mutex_);
    mailboxes_[id] = mailbox;
  }
  struct Unregister {
    Coordinator& c;
    std::int64_t id;
    ~Unregister() {
      std::lock_guard lock(c.mutex_);
      c.mailboxes_.erase(id);
    }
  } unregister{*this, id};

  Run run;
  run.spec = context.spec();
  run.spec.timeout_s = 0;  // enforced here, by the executor's watchdog: a stop travels
  run.spec.placement.clear();
  for (const auto& d : context.devices()) run.spec.placement.push_back(d.on_rank(0));
  run.kind = trial.kind;
  run.payload = trial.payload;
  if (trial.files.empty()) {
    run.files = read_trial_files(trial.trial_dir);
  } else {
    for (const std::string& name : trial.files)
      if (std::filesystem::is_regular_file(std::filesystem::path(trial.trial_dir) / name))
        run.files.push_back(read_trial_file(trial.trial_dir, name));
  }
  transport_.send(rank, encode(run));

  // A stop (cancel, Ctrl-C, a timeout) from another thread wakes the relay at once.
  std::stop_callback on_stop(context.stop_token(), [&] { mailbox->poke(); });
  bool stop_sent = false;
  std::deque<Message> batch;
  for (;;) {
    {
      std::unique_lock lock(mailbox->mutex);
      mailbox->cv.wait_for(lock, std::chrono::milliseconds(250),
                           [&] { return !mailbox->messages.empty() || mailbox->poked; });
      mailbox->poked = false;
      batch.swap(mailbox->messages);
    }
    if (batch.empty()) {
      std::lock_guard lock(mutex_);
      check_silence_locked();
      if (!lost_.empty()) return {TrialState::interrupted, lost_, sweep::Json::object()};
    }
    for (Message& message : batch) {
      if (auto* metric = std::get_if<Metric>(&message)) {
        context.report(metric->point);
      } else if (auto* log = std::get_if<Log>(&message)) {
        context.log(log->line);
      } else if (auto* progress = std::get_if<Progress>(&message)) {
        context.set_progress(progress->fraction, std::move(progress->text));
      } else if (auto* file = std::get_if<File>(&message)) {
        write_trial_file(trial.trial_dir, file->file);
      } else if (auto* finished = std::get_if<Finished>(&message)) {
        return std::move(finished->outcome);
      }
    }
    batch.clear();
    if (!stop_sent && context.should_stop()) {
      stop_sent = true;
      transport_.send(rank, encode(Stop{id, context.stop_kind(), context.stop_reason()}));
    }
  }
}

}  // namespace sweep::cluster
