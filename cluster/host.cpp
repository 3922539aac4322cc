/*
 * host.cpp — the serve loop (one thread: Open, Run, Stop, Close, Shutdown, and a heartbeat every
 * second) and the sink that forwards the host executor's events to rank 0.
 */
#include "cluster/host.h"

#include <unistd.h>

#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <mutex>
#include <optional>
#include <set>

#include "cluster/messages.h"
#include "cluster/trial_files.h"
#include "common/check.h"
#include "scheduler/executor.h"

namespace sweep::cluster {

namespace fs = std::filesystem;

namespace {

// Files of a trial's private directory already sent, by size and time, so the end of a trial
// sends only what changed since (a checkpoint sent when written is not sent twice).
class SentFiles {
 public:
  bool changed(const fs::path& path) {
    std::error_code ec;
    const auto stamp = std::pair{fs::file_size(path, ec), fs::last_write_time(path, ec)};
    std::lock_guard lock(mutex_);
    auto [it, inserted] = sent_.try_emplace(path.string(), stamp);
    if (inserted) return true;
    if (it->second == stamp) return false;
    it->second = stamp;
    return true;
  }
  void forget_under(const std::string& dir) {
    std::lock_guard lock(mutex_);
    for (auto it = sent_.lower_bound(dir); it != sent_.end() && it->first.starts_with(dir);)
      it = sent_.erase(it);
  }

 private:
  std::mutex mutex_;
  std::map<std::string, std::pair<std::uintmax_t, fs::file_time_type>> sent_;
};

class ForwardingSink : public scheduler::EventSink {
 public:
  ForwardingSink(Transport& transport, fs::path base)
      : transport_(transport), base_(std::move(base)) {}

  fs::path trial_dir(std::int64_t id) const { return base_ / std::to_string(id); }

  // A file that came from rank 0 with the trial: rank 0 has it already.
  void mark_sent(std::int64_t id, const std::string& name) { sent_.changed(trial_dir(id) / name); }

  void send_file(std::int64_t id, const std::string& name) {
    const fs::path dir = trial_dir(id);
    if (sent_.changed(dir / name)) to_coordinator(File{id, read_trial_file(dir, name)});
  }

  void on_metric(const scheduler::TrialSpec& spec, const scheduler::MetricPoint& point) override {
    to_coordinator(Metric{spec.id, point});
  }
  void on_log(const scheduler::TrialSpec& spec, std::string_view line) override {
    to_coordinator(Log{spec.id, std::string(line)});
  }
  void on_progress(const scheduler::TrialSpec& spec, double fraction,
                   const std::string& text) override {
    to_coordinator(Progress{spec.id, fraction, text});
  }
  void on_finished(const scheduler::TrialSpec& spec, const scheduler::TrialOutcome& outcome,
                   const std::optional<scheduler::Device>&) override {
    const fs::path dir = trial_dir(spec.id);
    scheduler::TrialOutcome final_outcome = outcome;
    try {
      for (const TrialFile& f : read_trial_files(dir))
        if (sent_.changed(dir / f.name)) to_coordinator(File{spec.id, f});
    } catch (const std::exception& e) {
      if (final_outcome.state == TrialState::completed) final_outcome.state = TrialState::failed;
      final_outcome.message = std::string("its files could not travel to rank 0: ") + e.what();
    }
    to_coordinator(Finished{spec.id, std::move(final_outcome)});
    sent_.forget_under(dir.string());
    std::error_code ec;
    fs::remove_all(dir, ec);
  }

 private:
  void to_coordinator(const Message& message) { transport_.send(0, encode(message)); }

  Transport& transport_;
  const fs::path base_;
  SentFiles sent_;
};

fs::path private_base(int rank) {
  const char* tmp = std::getenv("TMPDIR");
  return fs::path(tmp && *tmp ? tmp : "/tmp") /
         ("sweep-rank" + std::to_string(rank) + "-" + std::to_string(::getpid()));
}

}  // namespace

int serve(Transport& transport, const HostFacts& facts, const TrialFactories& factories,
          const ClusterOptions& options) {
  std::mutex mutex;
  std::condition_variable arrived;
  std::deque<Message> inbox;
  std::string damaged;
  transport.start([&](int source, std::string_view bytes) {
    std::lock_guard lock(mutex);
    if (source != 0) return;  // hosts hear only the coordinator
    try {
      inbox.push_back(decode(bytes));
    } catch (const std::exception& e) {
      damaged = e.what();
    }
    arrived.notify_one();
  });

  Hello hello;
  hello.hostname = transport.hostname();
  hello.local_rank = transport.local_rank();
  hello.local_size = transport.local_size();
  hello.cuda_devices = facts.cuda_devices;
  hello.cuda_built = facts.cuda_built;
  hello.pid = ::getpid();
  transport.send(0, encode(hello));

  const fs::path base = private_base(transport.rank());
  auto sink = std::make_shared<ForwardingSink>(transport, base);
  std::optional<scheduler::Executor> executor;
  auto end_session = [&] {
    if (!executor) return;
    executor->interrupt("the coordinator ended the sweep");
    executor->shutdown();
    executor.reset();
  };

  const auto beat = std::chrono::duration<double>(options.heartbeat_s);
  auto next_beat = std::chrono::steady_clock::now() + beat;
  for (;;) {
    std::deque<Message> messages;
    {
      std::unique_lock lock(mutex);
      arrived.wait_until(lock, next_beat, [&] { return !inbox.empty() || !damaged.empty(); });
      if (!damaged.empty()) {
        std::fprintf(stderr, "sweep: rank %d: %s\n", transport.rank(), damaged.c_str());
        lock.unlock();
        transport.abort(1);
      }
      messages.swap(inbox);
    }
    if (std::chrono::steady_clock::now() >= next_beat) {
      transport.send(0, encode(Heartbeat{}));
      next_beat = std::chrono::steady_clock::now() +
                  std::chrono::duration_cast<std::chrono::steady_clock::duration>(beat);
    }
    for (Message& message : messages) {
      if (auto* open = std::get_if<Open>(&message)) {
        end_session();
        scheduler::ExecutorOptions eo;
        eo.devices = open->devices;
        eo.cpu_slots = open->cpu_slots;
        eo.trials_per_gpu = open->trials_per_gpu;
        if (!eo.devices.empty())
          executor.emplace(eo, std::vector<std::shared_ptr<scheduler::EventSink>>{sink});
      } else if (auto* m = std::get_if<Run>(&message)) {
        const std::int64_t id = m->spec.id;
        auto fail = [&](const std::string& why) {
          transport.send(0, encode(Finished{id, {TrialState::failed, why, sweep::Json::object()}}));
        };
        if (!executor) {
          fail("rank " + std::to_string(transport.rank()) + " was given a trial without slots");
          continue;
        }
        auto factory = factories.find(m->kind);
        if (factory == factories.end()) {
          fail("rank " + std::to_string(transport.rank()) + " cannot run trials of kind '" +
               m->kind + "'");
          continue;
        }
        try {
          RemoteTrialInput input;
          input.spec = m->spec;
          input.payload = std::move(m->payload);
          input.trial_dir = sink->trial_dir(id).string();
          fs::remove_all(input.trial_dir);
          fs::create_directories(input.trial_dir);
          for (const TrialFile& f : m->files) write_trial_file(input.trial_dir, f);
          for (const TrialFile& f : m->files) sink->mark_sent(id, f.name);
          input.file_written = [sink, id](const std::string& name) { sink->send_file(id, name); };
          scheduler::TrialFn fn = factory->second(input);
          executor->submit(std::move(input.spec), std::move(fn));
        } catch (const std::exception& e) {
          fail(e.what());
        }
      } else if (auto* stop = std::get_if<Stop>(&message)) {
        if (executor) executor->stop(stop->trial_id, stop->kind, stop->reason);
      } else if (std::holds_alternative<Close>(message)) {
        if (executor) executor->shutdown();
        executor.reset();
        transport.send(0, encode(Closed{}));
      } else if (std::holds_alternative<Shutdown>(message)) {
        end_session();
        transport.stop();
        std::error_code ec;
        fs::remove_all(base, ec);
        return 0;
      }
    }
  }
}

}  // namespace sweep::cluster
