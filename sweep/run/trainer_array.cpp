/*
 * trainer_array.cpp — see trainer_array.h.
 */
#include "sweep/run/trainer_array.h"

#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "sweep/run/reporting_callback.h"
#include "trainer/array/train_array.h"

namespace sweep::run {

scheduler::ArrayFn make_trainer_array(std::map<std::int64_t, TrainerTrialInput> inputs) {
  auto shared =
      std::make_shared<const std::map<std::int64_t, TrainerTrialInput>>(std::move(inputs));
  return [shared](const std::vector<scheduler::TrialContext*>& contexts,
                  const scheduler::ArrayFinish& finish) {
    // Members whose config resolves train; the others fail at once, alone.
    std::vector<trainer::ArrayMember> members;
    std::vector<std::size_t> context_of;  // member -> index into contexts
    std::vector<std::unique_ptr<ReportingCallback>> callbacks;
    for (std::size_t i = 0; i < contexts.size(); ++i) {
      scheduler::TrialContext& context = *contexts[i];
      const auto input = shared->find(context.spec().id);
      if (input == shared->end()) {
        finish(i, {TrialState::failed, "internal: no trainer input for this trial", {}});
        continue;
      }
      try {
        trainer::ArrayMember m;
        m.config = place_trial(input->second, context);
        m.control = trial_control(input->second, m.config, context);
        callbacks.push_back(std::make_unique<ReportingCallback>(context, m.config.training.epochs));
        m.callback = callbacks.back().get();
        members.push_back(std::move(m));
        context_of.push_back(i);
      } catch (...) {
        finish(i, scheduler::failure_outcome(std::current_exception()));
      }
    }
    if (members.empty()) return;
    const std::string note = "trained in a fused array of " + std::to_string(members.size()) +
                             " trials on " + contexts[context_of.front()]->device().label();
    for (std::size_t i : context_of) contexts[i]->log(note);
    trainer::train_array(members, [&](std::size_t member, trainer::MemberEnd end) {
      const std::size_t i = context_of[member];
      if (end.error) {
        const scheduler::TrialOutcome outcome =
            scheduler::failure_outcome(with_checkpoint_hint(end.error));
        contexts[i]->log("failed: " + outcome.message);
        finish(i, outcome);
        return;
      }
      log_end(*contexts[i], end.result);
      finish(i, outcome_of(end.result, members[member].config));
    });
  };
}

}  // namespace sweep::run
