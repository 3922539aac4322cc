/*
 * train_array.cpp — the lockstep loop over an array's members, their admission while the device
 * has room, and each member's end.
 */
#include "trainer/array/train_array.h"

#include <algorithm>
#include <deque>
#include <memory>
#include <new>
#include <optional>
#include <string>

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
    // its allocation statuses (seen on an H100: cublasCreate on a full device).
    return c.out_of_memory();
  } catch (...) {
    return false;
  }
}

// DeviceSpec::share of the members' backends: how many steps the kernels' block plans and timed
// choices assume run at once, at most this many. On an H100, 16 and 64 LeNet members summed
// 809-817k images/s with 2, 855-864k with 4, 890-905k with 8, and no more with 12 or 16 (one
// member's step alone is slower so: the share is for arrays only).
constexpr std::size_t kMaxPlanShare = 8;

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
      // Every member's device work first, then every member's reads: the steps overlap.
      for (Active& a : active_)
        guard(a, [&] {
          if (a.run->epochs_done())
            a.ended = RunState::completed;
          else
            a.ended = a.run->launch_step();
        });
      for (Active& a : active_)
        if (!a.ended && a.run)
          guard(a, [&] {
            a.ended = a.run->complete_step_launching_validation();
            a.stepped = true;
          });
      // Every member's validation is launched by now (they overlap on the device): read them.
      for (Active& a : active_)
        if (!a.ended && a.run) guard(a, [&] { a.ended = a.run->complete_validation(); });
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

  // Starts pending members while the cap allows and the device has room.
  void admit() {
    while (!pending_.empty() && (cap_ <= 0 || active_count() < std::size_t(cap_))) {
      const std::size_t i = pending_.front();
      const ArrayMember& m = members_[i];
      try {
        auto run = std::make_unique<TrialRun>(configs_[i], data_for(i), *m.callback, m.control);
        run->start();
        pending_.pop_front();
        active_.push_back(Active{i, std::move(run), false, std::nullopt});
        report_.most_active = std::max(report_.most_active, active_count());
      } catch (...) {
        const std::exception_ptr error = std::current_exception();
        if (is_out_of_memory(error) && active_count() > 0) {
          cap_ = static_cast<int>(active_count());
          return;  // set back: admitted when a member ends
        }
        pending_.pop_front();
        finished_(i, MemberEnd{{}, error});
      }
    }
  }

  // The data of member i: loaded once per distinct data set (same_loaded_data), and uploaded once
  // to the members' device, where each member gathers its own batches from the one copy. When the
  // device has no room for the shared copy, members upload their own (and wait for room as any).
  std::shared_ptr<const LoadedData> data_for(std::size_t i) {
    if (data_[i]) return data_[i];
    const TrainConfig& c = members_[i].config;
    auto host = std::make_shared<LoadedData>(load_data(c.data, c.training.seed));
    const DeviceSpec device = c.replicas.empty() ? c.device : c.replicas.front();
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
  int cap_;  // 0: no limit until the device runs out of memory
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
