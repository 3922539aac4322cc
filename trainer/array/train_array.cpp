/*
 * train_array.cpp — the lockstep loop over an array's members, their admission while the device
 * has room, and each member's end.
 */
#include "trainer/array/train_array.h"

#include <algorithm>
#include <atomic>
#include <deque>
#include <future>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <thread>

#include "common/check.h"
#include "trainer/array/fusion.h"
#include "trainer/data/device_dataset.h"
#include "trainer/data/load_data.h"
#include "trainer/loop/trial_run.h"

namespace sweep::trainer {

namespace {

void check_members(const std::vector<ArrayMember>& members) {
  if (members.empty()) throw Error("a fused array needs at least one member");
  for (std::size_t i = 0; i < members.size(); ++i) {
    const ArrayMember& m = members[i];
    if (!m.callback) throw Error("fused array member " + std::to_string(i) + " has no callback");
    if (m.config.replicas.size() > 1)
      throw Error("fused array member " + std::to_string(i) +
                  " trains on several devices; an array trains on one");
    if (const std::string split = fusion_split(members.front().config, m.config); !split.empty())
      throw Error("fused array member " + std::to_string(i) + " differs from member 0 in " + split +
                  ", so they cannot train as one array");
  }
}

// One member being trained. `stepped`: it has completed a step in this process, so its device
// memory is all allocated (backend.h: nothing allocates after every shape was seen once).
struct Active {
  std::size_t index = 0;
  std::unique_ptr<TrialRun> run;
  bool stepped = false;
  bool launched = false;  // a step is on the device, not yet read
  std::optional<RunState> ended;
};

bool is_out_of_memory(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const OutOfMemory&) {
    return true;
  } catch (const std::bad_alloc&) {
    return true;
  } catch (const CallError& c) {
    // A library that allocates for itself (a cuDNN or cuBLAS handle, a stream): check.h marks
    // its allocation statuses (cublasCreate on a full device is one).
    return c.out_of_memory();
  } catch (...) {
    return false;
  }
}

// DeviceSpec::share of the members' backends: how many steps the kernels' block plans and timed
// choices assume run at once, at most this many. A 64-member LeNet array sums the most images/s
// with a share of 16: fewer leaves the GPU idle between members' kernels, more cuts blocks too
// small (one member's step alone is slower with a share: it is for arrays only). The timed
// choices time as many steps at once as the share (cuda_direct_conv.cu), so that a kernel
// planned for the share is timed as it will run; timed with fewer, cuDNN's would win and cost
// the array. (The figures per share: bench/LOG.md.)
constexpr std::size_t kMaxPlanShare = 16;

// Members built side by side at most (ArrayRun::build), and the threads that build them.
constexpr std::size_t kBuiltTogether = 64;
constexpr std::size_t kBuildThreads = 8;

// The members' configs as they train: the share set for the members that run together (each
// member's TrialRun keeps a reference, so these live as long as the array).
std::vector<TrainConfig> training_configs(const std::vector<ArrayMember>& members,
                                          const ArrayOptions& options) {
  std::size_t together = members.size();
  if (options.max_active > 0) together = std::min(together, std::size_t(options.max_active));
  const int share = static_cast<int>(std::clamp<std::size_t>(together, 1, kMaxPlanShare));
  std::vector<TrainConfig> configs;
  for (const ArrayMember& m : members) {
    configs.push_back(m.config);
    configs.back().device.share = share;
    for (DeviceSpec& r : configs.back().replicas) r.share = share;
  }
  return configs;
}

class ArrayRun {
 public:
  ArrayRun(const std::vector<ArrayMember>& members, const MemberFinished& finished,
           const ArrayOptions& options)
      : members_(members),
        configs_(training_configs(members, options)),
        finished_(finished),
        cap_(options.max_active),
        data_(members.size()) {
    for (std::size_t i = 0; i < members.size(); ++i) pending_.push_back(i);
  }

  ArrayReport run() {
    admit();
    while (!active_.empty()) {
      // Every member's device work first, then every member's reads, in member order: the steps
      // overlap on the device. A member's next step is launched as soon as its own reads are done
      // (and no validation is owed), not after the round's last read: at report steps (every
      // log_every) each read waits for its member's step, and launching only after the last one
      // let the GPU run dry and refill one member at a time. The callbacks still come in
      // rounds, in member order
      // (TrainArray.MembersReportInRoundsInMemberOrder).
      // Steps that cost the host more than a replay are launched after each loop, side by side.
      std::vector<Active*> costly;
      for (Active& a : active_)
        if (!a.launched) guard(a, [&] { launch_or_defer(a, costly); });
      launch_side_by_side(costly);
      for (Active& a : active_)
        if (a.launched && a.run)
          guard(a, [&] {
            a.launched = false;
            a.ended = a.run->complete_step_launching_validation();
            a.stepped = true;
            if (!a.ended && !a.run->owes_validation()) launch_or_defer(a, costly);
          });
      launch_side_by_side(costly);
      // Every member's validation is launched by now (they overlap on the device): read them, and
      // launch each member's next step once its own is read.
      for (Active& a : active_)
        if (!a.ended && a.run && !a.launched)
          guard(a, [&] {
            a.ended = a.run->complete_validation();
            if (!a.ended) launch_or_defer(a, costly);
          });
      launch_side_by_side(costly);
      bool room = false;
      for (Active& a : active_) {
        if (!a.run) {
          room = true;  // failed or set back in guard()
        } else if (a.ended) {
          end(a);
          room = true;
        }
      }
      std::erase_if(active_, [](const Active& a) { return !a.run; });
      if (room) admit();
    }
    return report_;
  }

 private:
  // Runs a member's part of a round; an exception ends that member only (or sets it back to be
  // admitted later, when the device ran out of memory before its first step).
  template <class Fn>
  void guard(Active& a, Fn&& fn) {
    try {
      fn();
    } catch (...) {
      const std::exception_ptr error = std::current_exception();
      a.run.reset();  // its device memory back first
      if (!a.stepped && is_out_of_memory(error) && active_count() > 0) {
        pending_.push_front(a.index);
        cap_ = static_cast<int>(active_count());  // what fits; admit() waits for room
      } else {
        finished_(a.index, MemberEnd{{}, error});
      }
    }
  }

  // The member's next step, or its end: every epoch done, or launch_step's state.
  static void launch(Active& a) {
    if (a.run->epochs_done()) {
      a.ended = RunState::completed;
      return;
    }
    a.ended = a.run->launch_step();
    a.launched = !a.ended;
  }

  // launch() without the interrupt check (TrialRun::launch_step_unchecked), so that it runs on
  // any thread: the members' first steps and costly steps side by side.
  static void launch_unchecked(Active& a) {
    if (a.run->epochs_done()) {
      a.ended = RunState::completed;
      return;
    }
    a.run->launch_step_unchecked();
    a.launched = true;
  }

  // The member's next step now, or, when it costs the host milliseconds
  // (TrialRun::next_step_is_costly), left for launch_side_by_side.
  static void launch_or_defer(Active& a, std::vector<Active*>& costly) {
    if (a.run->next_step_is_costly())
      costly.push_back(&a);
    else
      launch(a);
  }

  // The costly steps left by launch_or_defer, on up to kBuildThreads threads as the members' first
  // steps are: each member's next epoch's order drawn and uploaded, a partial batch's eager step,
  // the step graph's recording: their host time then overlaps instead of adding up (rounds that
  // wait on the GPU gain nothing). Without the interrupt check
  // (TrialRun::launch_step_unchecked): a later step sees it. A failure is handled here, in member
  // order, as guard() does.
  void launch_side_by_side(std::vector<Active*>& costly) {
    const std::size_t threads = std::min<std::size_t>(
        {costly.size(), kBuildThreads, std::max(1u, std::thread::hardware_concurrency())});
    if (threads <= 1) {
      for (Active* a : costly) guard(*a, [&] { launch(*a); });
      costly.clear();
      return;
    }
    std::vector<std::exception_ptr> errors(costly.size());
    on_threads(threads, 0, costly.size(), [&](std::size_t k) {
      try {
        launch_unchecked(*costly[k]);
      } catch (...) {
        errors[k] = std::current_exception();
      }
    });
    for (std::size_t k = 0; k < costly.size(); ++k)
      if (errors[k]) guard(*costly[k], [&] { std::rethrow_exception(errors[k]); });
    costly.clear();
  }

  std::size_t active_count() const {
    std::size_t n = 0;
    for (const Active& a : active_) n += a.run ? 1 : 0;
    return n;
  }

  void end(Active& a) {
    TrainResult result;
    try {
      result = a.run->finish(*a.ended);
    } catch (...) {
      a.run.reset();
      finished_(a.index, MemberEnd{{}, std::current_exception()});
      return;
    }
    a.run.reset();
    finished_(a.index, MemberEnd{std::move(result), nullptr});
  }

  // Starts pending members while the cap allows and the device has room. A batch of them is built,
  // started and given its first step side by side (build()), then admitted in order. Where one
  // failed, those that did are set back and admission goes on one member at a time: built
  // together they may have crowded each other out of a device that has room for some of them,
  // and alone each gets the error (or the room) it would have had.
  void admit() {
    while (!pending_.empty() && (cap_ <= 0 || active_count() < std::size_t(cap_))) {
      std::size_t room = std::min(pending_.size(), kBuiltTogether);
      if (cap_ > 0) room = std::min(room, std::size_t(cap_) - active_count());
      if (one_at_a_time_) room = 1;
      std::vector<std::size_t> batch(pending_.begin(), pending_.begin() + std::ptrdiff_t(room));
      std::vector<Built> built = build(batch);
      std::vector<std::size_t> set_back;
      for (std::size_t k = 0; k < batch.size(); ++k) {
        pending_.pop_front();
        const std::size_t i = batch[k];
        const std::exception_ptr error = built[k].error;
        if (!error) {
          active_.push_back(std::move(built[k].member));
          report_.most_active = std::max(report_.most_active, active_count());
          continue;
        }
        built[k].member.run.reset();
        // Built side by side, any failure is retried alone: on a nearly full device cuDNN's
        // handles can fail with an internal error rather than an allocation status.
        if (batch.size() > 1 || (is_out_of_memory(error) && active_count() > 0))
          set_back.push_back(i);
        else
          finished_(i, MemberEnd{{}, error});
      }
      if (set_back.empty()) continue;
      for (auto it = set_back.rbegin(); it != set_back.rend(); ++it) pending_.push_front(*it);
      if (batch.size() > 1) {
        one_at_a_time_ = true;  // retried alone, as they would have been
        continue;
      }
      cap_ = static_cast<int>(active_count());  // what fits; admitted when a member ends
      return;
    }
  }

  // A member built, started and its first step launched, or why it could not be.
  struct Built {
    Active member;
    std::exception_ptr error;
  };

  // Builds and starts the runs of members `batch` (their data loaded first, here) and launches
  // their first steps, on up to kBuildThreads threads: each run's backend, network and initial
  // weights (drawn on the host) are its own. The first member's first step times each shape's
  // kernel choices (once a machine, with the tuning cache), and each other's first step, eager
  // with its first allocations, costs host time; so the first member is built and stepped alone,
  // the others are built side by side, then their first steps go side by side, their choices
  // made (the CPU's arrays take this path too: run-tests runs TrainArray.* under
  // ThreadSanitizer).
  // A first step checks no interrupt (TrialRun::launch_step_unchecked): a later one does.
  std::vector<Built> build(const std::vector<std::size_t>& batch) {
    std::vector<Built> built(batch.size());
    std::vector<std::shared_ptr<const LoadedData>> data(batch.size());
    for (std::size_t k = 0; k < batch.size(); ++k) try {
        data[k] = data_for(batch[k]);
      } catch (...) {
        built[k].error = std::current_exception();
      }
    const auto guarded = [&](std::size_t k, auto&& fn) {
      if (built[k].error) return;
      try {
        fn(built[k].member);
      } catch (...) {
        built[k].error = std::current_exception();
      }
    };
    const auto make = [&](std::size_t k) {
      guarded(k, [&](Active& a) {
        const ArrayMember& m = members_[batch[k]];
        a.index = batch[k];
        a.run = std::make_unique<TrialRun>(configs_[batch[k]], data[k], *m.callback, m.control);
        a.run->start();
      });
    };
    const auto first_step = [&](std::size_t k) { guarded(k, launch_unchecked); };
    const std::size_t threads = std::min<std::size_t>(
        {batch.size(), kBuildThreads, std::max(1u, std::thread::hardware_concurrency())});
    if (threads <= 1) {
      for (std::size_t k = 0; k < batch.size(); ++k) make(k), first_step(k);
      return built;
    }
    // Member 0 first, alone: its first step may time the shapes' kernel choices, and timings taken
    // while others were built (their allocations and library handles holding the driver between
    // the timing's graph launches) can choose a slower kernel (cuDNN's forward for LeNet's first
    // layer over ours), which the tuning cache would then keep for every later process.
    make(0), first_step(0);
    on_threads(threads, 1, batch.size(), make);
    on_threads(threads, 1, batch.size(), first_step);
    return built;
  }

  // fn(k) for k in [from, to) on `threads` threads; returns when every one is done.
  template <class Fn>
  static void on_threads(std::size_t threads, std::size_t from, std::size_t to, const Fn& fn) {
    std::atomic<std::size_t> next{from};
    std::vector<std::jthread> workers;
    for (std::size_t t = 0; t < threads; ++t)
      workers.emplace_back([&] {
        for (std::size_t k; (k = next.fetch_add(1)) < to;) fn(k);
      });
  }  // the workers join

  // The data of member i: loaded once per distinct data set (same_loaded_data), and uploaded once
  // to the members' device, where each member gathers its own batches from the one copy. When the
  // device has no room for the shared copy, members upload their own (and wait for room as any).
  std::shared_ptr<const LoadedData> data_for(std::size_t i) {
    if (data_[i]) return data_[i];
    const TrainConfig& c = members_[i].config;
    const DeviceSpec device = c.devices().front();
    // The GPU starts while the data decodes (each takes a few tenths of a second, once a process).
    // The process's shared load (a sweep's StartAhead has usually made it by now) copied, not
    // loaded again: its statistics over the 47 MB training set are not computed twice.
    std::future<void> started = warm_up_devices({device});
    auto host = std::make_shared<LoadedData>(*load_data_shared(c.data, c.training.seed));
    started.wait();
    try {
      host->uploaded = std::make_shared<const SharedUpload>(device, *host);
    } catch (...) {
      if (!is_out_of_memory(std::current_exception())) throw;
    }
    std::shared_ptr<const LoadedData> loaded = std::move(host);
    for (std::size_t j = 0; j < members_.size(); ++j)
      if (!data_[j] && same_loaded_data(c, members_[j].config)) data_[j] = loaded;
    return loaded;
  }

  const std::vector<ArrayMember>& members_;
  const std::vector<TrainConfig> configs_;  // training_configs(members_)
  const MemberFinished& finished_;
  int cap_;                     // 0: no limit until the device runs out of memory
  bool one_at_a_time_ = false;  // admit() builds one member at a time (after running out of memory)
  std::vector<std::shared_ptr<const LoadedData>> data_;
  std::deque<std::size_t> pending_;
  std::vector<Active> active_;
  ArrayReport report_;
};

}  // namespace

ArrayReport train_array(const std::vector<ArrayMember>& members, const MemberFinished& finished,
                        const ArrayOptions& options) {
  check_members(members);
  for (const ArrayMember& m : members) check_training_spec(m.config.training);
  if (options.max_active < 0) throw Error("a fused array's max_active must be >= 0");
  return ArrayRun(members, finished, options).run();
}

}  // namespace sweep::trainer
