/*
 * train.cpp — train(): one trial's TrialRun (trainer/loop/trial_run.h) stepped to its end, on the
 * data loaded for it; and the words of RunState.
 */
#include "trainer/train.h"

#include <future>
#include <memory>
#include <optional>
#include <utility>

#include "trainer/data/load_data.h"
#include "trainer/loop/trial_run.h"

namespace sweep::trainer {

namespace {
constexpr Word<RunState> kRunStates[] = {{RunState::completed, "completed"},
                                         {RunState::early_stopped, "early_stopped"},
                                         {RunState::stopped_by_callback, "stopped_by_callback"},
                                         {RunState::diverged, "diverged"},
                                         {RunState::interrupted, "interrupted"}};
}  // namespace

Words<RunState> words_of(RunState) { return {kRunStates, std::size(kRunStates)}; }
const char* to_string(RunState s) { return name_of(s).data(); }  // the table's literals end in NUL

TrainResult train(const TrainConfig& config, TrainCallback& callback, const RunControl& control) {
  check_training_spec(config.training);
  // The GPUs start while the data decodes (each takes a few tenths of a second, once a process).
  std::future<void> started = warm_up_devices(config.devices());
  std::shared_ptr<const LoadedData> data = load_data_shared(config.data, config.training.seed);
  started.wait();
  TrialRun run(config, std::move(data), callback, control);
  run.start();
  std::optional<RunState> ended;
  while (!ended && !run.epochs_done()) {
    ended = run.launch_step();
    if (!ended) ended = run.complete_step();
  }
  return run.finish(ended.value_or(RunState::completed));
}

}  // namespace sweep::trainer
