/*
 * parfor_learning_rates.cpp — sweep as a C++ library: train LeNet at three learning rates in
 * parallel slots (MATLAB's parfor / parfeval + fetchNext), with a per-trial callback that sees
 * every validation and may stop the run (MATLAB's OutputFcn). No YAML, no database.
 *
 *   build/examples/parfor_learning_rates            # synthetic data, ~10 s on 2 CPU cores
 */
#include <cstdio>
#include <vector>

#include "scheduler/scheduler.h"
#include "trainer/train.h"

using namespace sweep;

namespace {

// Forwards every validation to the scheduler (metric sinks, stopping rules) and stops the run
// when the scheduler asks (cancel, ASHA, Ctrl-C).
class ToContext : public trainer::TrainCallback {
 public:
  explicit ToContext(scheduler::TrialContext& context) : context_(context) {}
  bool on_validation(const trainer::ValidationInfo& v) override {
    context_.report("val_accuracy", v.val_accuracy, v.iteration, v.epoch);
    return !context_.should_stop();
  }
  bool on_iteration(const trainer::IterationInfo&) override { return !context_.should_stop(); }

 private:
  scheduler::TrialContext& context_;
};

}  // namespace

int main() {
  scheduler::ExecutorOptions options;
  options.cpu_slots = 2;  // two trials at a time on the CPU
  scheduler::Executor executor(options);

  const std::vector<double> learning_rates = {0.003, 0.01, 0.03};
  std::vector<scheduler::TrialFuture> futures;
  for (std::size_t i = 0; i < learning_rates.size(); ++i) {
    scheduler::TrialSpec spec;
    spec.number = static_cast<int>(i);
    spec.params = {{"learning_rate", learning_rates[i]}};
    const double lr = learning_rates[i];
    futures.push_back(executor.submit(spec, [lr](scheduler::TrialContext& context) {
      trainer::TrainConfig config;
      config.data.dataset = sweep::trainer::DatasetKind::synthetic;
      config.model.preset = sweep::trainer::Preset::lenet;
      config.training.learning_rate = lr;
      config.training.epochs = 2;
      config.device.threads = 1;
      ToContext callback(context);
      const trainer::TrainResult result = trainer::train(config, callback);
      const TrialState state = result.state == trainer::RunState::diverged ? TrialState::diverged
                                                                           : TrialState::completed;
      return scheduler::TrialOutcome{
          state, trainer::to_string(result.state), {{"val_accuracy", result.final_val_accuracy}}};
    }));
  }
  // Whichever finishes first is printed first.
  while (auto index = scheduler::fetch_next(futures)) {
    const scheduler::TrialOutcome outcome = futures[*index].get();
    std::printf("learning_rate %.3f: val_accuracy %.4f\n", learning_rates[*index],
                outcome.summary["val_accuracy"].get<double>());
  }
}
