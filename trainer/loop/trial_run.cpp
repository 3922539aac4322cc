/*
 * trial_run.cpp — the training loop of one trial: epochs x mini-batches, reports, validation,
 * early stopping, checkpoints, and the final evaluation of the output network.
 *
 * The one decision that shapes the rest: the host reads from the backend only at report points
 * (every log_every iterations and at epoch ends), at validations and at checkpoints. Training loss
 * and correct counts accumulate in a double buffer on the backend in between, so a GPU step never
 * waits for the host. A last partial batch is kept (PyTorch's drop_last=False) unless it holds a
 * single image (see batch_source.h). Everything random is a function of training.seed, the epoch
 * and the global iteration, so the same seed on the same machine gives the same weights, and a
 * resumed run continues bit for bit.
 *
 * On a backend that can capture (CUDA), a model without dropout trains its full batches through
 * one recorded step (a CUDA graph) replayed with each step's values; the first full batch of a
 * process, partial batches, validation and read-backs stay eager (see run_full_batch).
 */
#include "trainer/loop/trial_run.h"

#include <chrono>
#include <cmath>
#include <filesystem>
#include <optional>

#include "common/check.h"
#include "trainer/backend/backend.h"
#include "trainer/checkpoint.h"
#include "trainer/config_keys.h"
#include "trainer/data/batch_source.h"
#include "trainer/data/load_data.h"
#include "trainer/eval/evaluator.h"
#include "trainer/layers/layer.h"
#include "trainer/loop/monitor.h"
#include "trainer/loop/step_graph.h"
#include "trainer/loop_state.h"
#include "trainer/model_rebuild.h"
#include "trainer/network.h"
#include "trainer/optim/optimizer.h"
#include "trainer/optim/schedule.h"
#include "trainer/parallel/replica_set.h"

namespace sweep::trainer {

namespace {
using Clock = std::chrono::steady_clock;
}  // namespace

void check_training_spec(const TrainingSpec& t) { check_training_keys(t); }

namespace {

// Dropout draws a new mask from a counter each step, which a replayed graph cannot vary.
bool has_dropout(const Network& net) {
  for (const auto& layer : net.layers())
    if (layer->contains(LayerKind::dropout)) return true;
  return false;
}

}  // namespace

// Types of TrialRun::Impl's members: named, not anonymous, since Impl itself has linkage (GCC
// warns of a member whose type has none when files are compiled together in a unity build).
namespace trial_run_detail {

// A validation whose evaluation is launched: what on_validation will be told, and whether it
// evaluates the final weights. (At namespace scope: clang cannot construct a nested class with
// default member initializers inside its still-incomplete enclosing class, as optional needs.)
struct PendingValidation {
  ValidationInfo info;
  bool after_last_step = false;
};
// What a step still owes after after_step(): its validation's results, its epoch-end duties.
struct Owed {
  bool epoch_end = false;
  std::optional<PendingValidation> validation;
};

}  // namespace trial_run_detail
using trial_run_detail::Owed;
using trial_run_detail::PendingValidation;

// One training run. Members live as long as the run.
class TrialRun::Impl {
 public:
  Impl(const TrainConfig& cfg, std::shared_ptr<const LoadedData> data, TrainCallback& cb,
       const RunControl& control)
      : cfg_(cfg),
        t_(cfg.training),
        cb_(cb),
        control_(control),
        monitor_(t_.early_stopping.monitor, t_.early_stopping.min_delta,
                 t_.early_stopping.patience),
        schedule_(t_.schedule, t_.learning_rate),
        data_(std::move(data)),
        reps_(cfg.devices(), cfg, *data_),
        backend_(&reps_.backend()),
        net_(reps_.net()),
        opt_(reps_.optimizer()),
        ipe_(reps_.batches_per_epoch()),
        total_iters_(ipe_ * t_.epochs),
        regression_(net_.classes() == 0) {
    if (regression_ && t_.early_stopping.monitor == MonitorMetric::val_accuracy)
      throw Error(
          "training.early_stopping.monitor is val_accuracy but the data is a regression "
          "set, which has no accuracy: monitor val_loss (its mean squared error) or "
          "train_loss");
    if (monitor_.needs_validation() && data_->validation.empty() && monitor_.patience() > 0)
      throw Error("training.early_stopping.monitor is " + monitor_.name() +
                  " but data.validation is none: monitor train_loss or add a validation set");
    if (reps_.can_capture() && !has_dropout(net_)) graph_.allow();
    keep_best_ = t_.output_network == OutputNetwork::best &&
                 (!monitor_.needs_validation() || reps_.has_validation());
    if (keep_best_) {
      best_params_ = DeviceBuffer(*backend_, net_.param_count() * sizeof(float));
      best_state_ = DeviceBuffer(*backend_, net_.state_count() * sizeof(float));
    }
  }

  void start() {
    if (control_.resume && !control_.checkpoint_path.empty() &&
        std::filesystem::exists(control_.checkpoint_path))
      resume_from(control_.checkpoint_path);
    start_ = Clock::now();
    last_report_time_ = start_;
    last_report_images_ = st_.images_trained;
  }

  bool epochs_done() const { return st_.epoch >= t_.epochs; }

  // Only where steps replay a recorded graph: elsewhere (the CPU) a step is its own computation,
  // and oneTBB's tasks on short-lived threads are what ThreadSanitizer cannot see synchronised.
  // A pending interrupt: the step is launched where the interrupt is checked (launch_step).
  bool next_step_is_costly() const {
    if (!graph_.allowed() || epochs_done() || (control_.interrupt && control_.interrupt->load()))
      return false;
    return !epoch_begun_ || reps_.batch_size_at(st_.batch_in_epoch) != t_.batch_size ||
           !graph_.captured();
  }

  // The step's first half: the epoch's order when an epoch begins, the interrupt check, then the
  // step's device work (asynchronous on a GPU). Returns a state when the run must end here.
  std::optional<RunState> launch_step(bool check_interrupt) {
    if (!epoch_begun_) {
      reps_.begin_epoch(st_.epoch);
      epoch_begun_ = true;
    }
    if (check_interrupt && control_.interrupt && control_.interrupt->load()) return interrupt();
    step_lr_ = schedule_.at(st_.epoch, st_.iteration, ipe_, total_iters_);
    const OptimizerStep opt = opt_.next_step(step_lr_);
    step_batch_ = reps_.batch_size_at(st_.batch_in_epoch);
    if (step_batch_ == t_.batch_size && graph_.wants_graph()) {
      run_full_batch(opt);
    } else {
      run_eager(opt);
      if (step_batch_ == t_.batch_size) graph_.saw_full_batch();
    }
    return std::nullopt;
  }

  // The step's second half: whatever falls due after it (reports, validation, early stopping,
  // checkpoints), then the next epoch when this one is done. Returns a state when the run must end.
  // defer_validation: a validation that falls due is launched and left for complete_validation().
  std::optional<RunState> complete_step(bool defer_validation) {
    if (std::optional<RunState> ended = after_step()) return ended;
    if (owed_ && owed_->validation && defer_validation) return std::nullopt;
    return complete_validation();
  }

  bool owes_validation() const { return owed_.has_value(); }

  // What after_step() left owed: the launched validation's results, the epoch-end checkpoint, the
  // next epoch.
  std::optional<RunState> complete_validation() {
    if (!owed_) return std::nullopt;
    Owed owed = std::move(*owed_);
    owed_.reset();
    if (owed.validation)
      if (std::optional<RunState> s = end_validation(*owed.validation)) return s;
    if (owed.epoch_end && t_.checkpoint.every_epochs > 0 && !control_.checkpoint_path.empty() &&
        st_.epochs_completed % t_.checkpoint.every_epochs == 0) {
      save_checkpoint(control_.checkpoint_path);
      if (control_.checkpoint_written) control_.checkpoint_written(control_.checkpoint_path);
    }
    if (st_.batch_in_epoch == ipe_) {
      ++st_.epoch;
      st_.batch_in_epoch = 0;
      epoch_begun_ = false;
    }
    return std::nullopt;
  }

  // Bookkeeping after a launched step, up to launching a validation that falls due; the rest is
  // left in owed_ for complete_validation().
  std::optional<RunState> after_step() {
    const double lr = step_lr_;
    const int b = step_batch_;
    ++st_.batch_in_epoch;
    ++st_.iteration;
    st_.images_trained += b;
    pending_images_ += b;

    const bool epoch_end = st_.batch_in_epoch == ipe_;
    const bool last = st_.iteration == total_iters_;
    IterationInfo info;
    info.epoch = st_.epoch + 1;
    info.iteration = st_.iteration;
    info.iterations_per_epoch = ipe_;
    info.total_iterations = total_iters_;
    info.learning_rate = lr;
    if (st_.iteration % t_.log_every == 0 || epoch_end) {
      drain_stats();
      if (!std::isfinite(st_.since_log.loss_sum)) return diverge("training loss");
      if (!weights_finite_) return diverge("a weight");
      const auto now = Clock::now();
      const double dt = std::chrono::duration<double>(now - last_report_time_).count();
      info.has_loss = true;
      info.train_loss = st_.since_log.mean_loss();
      info.train_accuracy = regression_ ? 0 : st_.since_log.accuracy();
      info.images_per_second = dt > 0 ? double(st_.images_trained - last_report_images_) / dt : 0;
      last_report_time_ = now;
      last_report_images_ = st_.images_trained;
      st_.since_log.clear();
    }
    info.elapsed_seconds = elapsed();
    if (epoch_end) {
      ++st_.epochs_completed;
      st_.last_epoch = st_.this_epoch;
      st_.this_epoch.clear();
    }
    if (!cb_.on_iteration(info)) return stop_by_callback(info.epoch);

    const bool validate_now = t_.validation_frequency > 0
                                  ? (st_.iteration % t_.validation_frequency == 0 || last)
                                  : epoch_end;
    Owed owed{epoch_end, std::nullopt};
    if (validate_now) {
      owed.validation.emplace();
      if (auto s = begin_validation(info.epoch, epoch_end, lr, *owed.validation)) return s;
    }
    owed_ = std::move(owed);
    return std::nullopt;
  }

  // The step's device work, launched op by op on every replica: gather, forward, loss, backward,
  // (the gradients' sum across replicas), update.
  void run_eager(const OptimizerStep& opt) {
    reps_.step(st_.batch_in_epoch, std::uint64_t(st_.iteration), opt);
  }

  // A full batch once an eager one has been seen: the step is recorded once (the recorded ops do
  // not run), then every full batch replays it with this step's lr, t, augmentation step and
  // offset into the epoch's index array (re-uploaded each epoch into the same buffer). If the
  // recording throws, the graph is dropped and the run stays eager; the step then runs eagerly.
  void run_full_batch(const OptimizerStep& opt) {
    if (!graph_.captured()) {
      try {
        reps_.begin_capture();
        run_eager(opt);
        reps_.end_capture();
        graph_.captured_at(st_.batch_in_epoch);
      } catch (const std::exception&) {
        reps_.drop_graph();
        graph_.failed();
        run_eager(opt);
        return;
      }
    }
    reps_.replay(opt, std::uint64_t(st_.iteration),
                 (st_.batch_in_epoch - graph_.captured_batch()) * t_.batch_size);
  }

  // Validation (when there is a validation set) and the monitor's bookkeeping, in two halves: the
  // evaluation's device work is launched, and its results are read later, so that a fused array
  // launches every member's validation before waiting for any.
  std::optional<RunState> begin_validation(int epoch, bool epoch_end, double lr,
                                           PendingValidation& p) {
    drain_stats();
    if (!std::isfinite(st_.since_validation.loss_sum)) return diverge("training loss");
    if (!weights_finite_) return diverge("a weight");
    ValidationInfo& v = p.info;
    v.epoch = epoch;
    v.iteration = st_.iteration;
    v.epoch_end = epoch_end;
    v.train_loss = st_.since_validation.mean_loss();
    v.regression = regression_;
    (regression_ ? v.train_mae : v.train_accuracy) = st_.since_validation.accuracy();
    v.learning_rate = lr;
    st_.since_validation.clear();
    // After the run's last step these weights are the final ones: the pass that validates them
    // also counts the confusion matrix, and finish() reports it instead of a second pass.
    p.after_last_step = st_.iteration == total_iters_;
    if (reps_.has_validation()) reps_.launch_evaluate(p.after_last_step);
    return std::nullopt;
  }

  std::optional<RunState> end_validation(PendingValidation& p) {
    ValidationInfo& v = p.info;
    const int epoch = v.epoch;
    if (reps_.has_validation()) {
      const EvalResult r = reps_.collect_evaluate();
      if (p.after_last_step) final_eval_ = r;
      v.val_loss = r.loss;
      v.val_accuracy = r.accuracy;
      if (regression_) {
        v.val_rmse = r.rmse();
        v.val_mae = r.mae;
        v.val_r2 = r.r2();
      }
      if (!std::isfinite(r.loss)) return diverge("validation loss");
      st_.has_last_validation = true;
      st_.last_val_loss = r.loss;
      st_.last_val_accuracy = r.accuracy;
    }
    ++st_.validations;
    v.elapsed_seconds = elapsed();
    v.images_per_second =
        v.elapsed_seconds > 0 ? double(st_.images_trained) / v.elapsed_seconds : 0;

    std::optional<RunState> stop;
    if (reps_.has_validation() || !monitor_.needs_validation()) {
      const double value = monitor_.pick(v.val_loss, v.val_accuracy, v.train_loss);
      if (monitor_.improves(value, st_.has_best, st_.best_metric)) {
        st_.has_best = true;
        st_.best_metric = value;
        st_.best_val_loss = v.val_loss;
        st_.best_val_accuracy = v.val_accuracy;
        st_.best_epoch = epoch;
        st_.best_iteration = st_.iteration;
        st_.bad_validations = 0;
        if (keep_best_) {
          backend_->copy(best_params_.as<void>(), net_.params(), best_params_.bytes());
          if (best_state_)
            backend_->copy(best_state_.as<void>(), net_.state(), best_state_.bytes());
        }
      } else if (++st_.bad_validations >= monitor_.patience() && monitor_.patience() > 0) {
        message_ = "early stopping: " + monitor_.name() + " did not improve for " +
                   std::to_string(st_.bad_validations) + " validations (best at epoch " +
                   std::to_string(st_.best_epoch) + ")";
        stop = RunState::early_stopped;
      }
    }
    // Without a validation set there is nothing to report as val_*: the callback is not called
    // (a 0 loss would read as a perfect model), but a train_loss monitor still works.
    if (reps_.has_validation() && !cb_.on_validation(v)) return stop_by_callback(epoch);
    return stop;
  }

  // Reads the backend's loss / correct sums into the host accumulators and zeroes them. The same
  // read brings the weights' sum of squares: a layer that maps NaN to 0 (a ReLU written as
  // x > 0 ? x : 0) can keep the loss finite while the weights are already NaN, and that run has
  // diverged all the same.
  void drain_stats() {
    if (pending_images_ == 0) return;
    const std::array<double, 3> sums = reps_.take_stats();
    weights_finite_ = std::isfinite(sums[2]);
    const double n = double(pending_images_);
    st_.since_log.add(sums[0], sums[1], n);
    st_.since_validation.add(sums[0], sums[1], n);
    st_.this_epoch.add(sums[0], sums[1], n);
    pending_images_ = 0;
  }

  double elapsed() const {
    return st_.elapsed_seconds + std::chrono::duration<double>(Clock::now() - start_).count();
  }

  RunState diverge(const std::string& what) {
    message_ = what + " became NaN or Inf at iteration " + std::to_string(st_.iteration) +
               " (epoch " + std::to_string(st_.epoch + 1) + "); try a lower learning rate or " +
               "gradient clipping";
    return RunState::diverged;
  }

  RunState stop_by_callback(int epoch) {
    message_ = "stopped by the callback at iteration " + std::to_string(st_.iteration) +
               " (epoch " + std::to_string(epoch) + ")";
    return RunState::stopped_by_callback;
  }

  RunState interrupt() {
    if (control_.checkpoint_path.empty()) {
      message_ = "interrupted at iteration " + std::to_string(st_.iteration) +
                 "; no checkpoint path was given, so nothing was saved";
    } else {
      save_checkpoint(control_.checkpoint_path);
      if (control_.checkpoint_written) control_.checkpoint_written(control_.checkpoint_path);
      message_ = "interrupted at iteration " + std::to_string(st_.iteration) +
                 "; checkpoint saved to " + control_.checkpoint_path;
    }
    return RunState::interrupted;
  }

  void save_checkpoint(const std::string& path) {
    CheckpointData d;
    d.identity = control_.identity;
    d.seed = t_.seed;
    d.batch_size = t_.batch_size;
    d.train_size = data_->train.size();
    d.loop = st_;
    // The device's running sums travel as they are (LoopState::pending says why).
    if (pending_images_ > 0) {
      const std::array<double, 2> sums = reps_.peek_stats();
      d.loop.pending = {sums[0], sums[1], double(pending_images_)};
    }
    if (d.loop.batch_in_epoch == ipe_) {  // at an epoch's end: the next step starts the next epoch
      ++d.loop.epoch;
      d.loop.batch_in_epoch = 0;
    }
    d.loop.optimizer_steps = opt_.steps_taken();
    d.loop.elapsed_seconds = elapsed();
    d.params = to_host(net_.params(), net_.param_count());
    d.state = to_host(net_.state(), net_.state_count());
    d.optimizer_state1 = to_host(opt_.state1(), opt_.state1_count());
    d.optimizer_state2 = to_host(opt_.state2(), opt_.state2_count());
    if (keep_best_ && st_.has_best) {
      d.best_params = to_host(best_params_.f(), net_.param_count());
      d.best_state = to_host(best_state_.f(), net_.state_count());
    }
    write_checkpoint(path, d);
  }

  void note(const std::string& line) const {
    if (control_.note) control_.note(line);
  }

  // Continues from the checkpoint at `path`; one that cannot be used fails the run, or, when the
  // control says so, is set aside and the run stays at its start.
  void resume_from(const std::string& path) {
    std::optional<CheckpointData> d;
    try {
      d = usable_checkpoint(path);
    } catch (const CheckpointError& e) {
      if (!control_.set_aside_unusable_checkpoint) throw;
      const std::string kept = set_aside_checkpoint(path, e);
      note(std::string(e.what()) + "; set aside as " + kept + ", the trial trains from the start");
      return;
    }
    restore(*d);
  }

  // The checkpoint at `path` if it is this run's, else CheckpointError (nothing changed).
  CheckpointData usable_checkpoint(const std::string& path) const {
    CheckpointData d = read_checkpoint(path);
    check_checkpoint_identity(path, d, control_.identity);
    check_checkpoint_matches(path, d, t_.seed, t_.batch_size, data_->train.size(),
                             net_.param_count(), net_.state_count(), opt_.state1_count(),
                             opt_.state2_count());
    // The loop indexes batches and epochs with these: a file whose checks pass but whose place
    // lies outside this run is not this run's.
    if (d.loop.epoch > t_.epochs || d.loop.batch_in_epoch > ipe_)
      throw CheckpointRefused(path + ": checkpoint's place (epoch " + std::to_string(d.loop.epoch) +
                              ", batch " + std::to_string(d.loop.batch_in_epoch) +
                              ") lies outside this run (" + std::to_string(t_.epochs) +
                              " epochs of " + std::to_string(ipe_) + " batches)");
    if (!d.identity && control_.identity != CheckpointIdentity{})
      note(path +
           ": this checkpoint was written before checkpoints named their trial; resumed "
           "on its seed, batch size, training-set size and sizes alone");
    return d;
  }

  void restore(const CheckpointData& d) {
    st_ = d.loop;
    st_.pending.clear();
    if (d.loop.pending.count > 0) {
      reps_.put_stats(d.loop.pending.loss_sum, d.loop.pending.correct);
      pending_images_ = static_cast<std::int64_t>(d.loop.pending.count);
    }
    opt_.set_steps_taken(d.loop.optimizer_steps);
    reps_.load(d.params, d.state, d.optimizer_state1, d.optimizer_state2);
    if (keep_best_ && !d.best_params.empty()) {
      to_device(best_params_.f(), d.best_params);
      to_device(best_state_.f(), d.best_state);
    }
  }

  std::vector<float> to_host(const float* p, std::size_t n) {
    std::vector<float> v(n);
    if (n) backend_->copy_to_host(v.data(), p, n * sizeof(float));
    return v;
  }
  void to_device(float* p, const std::vector<float>& v) {
    if (!v.empty()) backend_->copy_to_device(p, v.data(), v.size() * sizeof(float));
  }

  TrainResult finish(RunState state) {
    TrainResult r;
    r.state = state;
    r.device = reps_.device_name();
    r.classes = net_.classes();
    r.class_names = data_->train.class_names;
    r.iterations = st_.iteration;
    r.epochs_completed = st_.epochs_completed;
    r.elapsed_seconds = elapsed();
    r.images_per_second =
        r.elapsed_seconds > 0 ? double(st_.images_trained) / r.elapsed_seconds : 0;
    if (state != RunState::diverged && state != RunState::interrupted) drain_stats();
    const LossAccumulator& train_part = st_.last_epoch.count > 0 ? st_.last_epoch : st_.this_epoch;
    r.final_train_loss = train_part.mean_loss();
    r.final_train_accuracy = regression_ ? 0 : train_part.accuracy();
    r.regression = regression_;
    const bool use_best = keep_best_ && st_.has_best;
    r.best_val_loss = use_best ? st_.best_val_loss : st_.last_val_loss;
    r.best_val_accuracy = use_best ? st_.best_val_accuracy : st_.last_val_accuracy;
    r.best_epoch = use_best ? st_.best_epoch : st_.epoch + (st_.batch_in_epoch > 0 ? 1 : 0);
    if (state == RunState::completed)
      message_ = "completed " + std::to_string(st_.epochs_completed) + " epochs";
    r.message = message_;
    if (state == RunState::diverged || state == RunState::interrupted) return r;

    if (use_best) {
      backend_->copy(net_.params(), best_params_.as<void>(), best_params_.bytes());
      if (best_state_) backend_->copy(net_.state(), best_state_.as<void>(), best_state_.bytes());
      reps_.sync_from_first();
    }
    if (reps_.has_validation()) {
      // The last step's validation evaluated these very weights unless the best epoch's were
      // restored from an earlier one.
      const bool same_weights = final_eval_ && (!use_best || st_.best_iteration == st_.iteration);
      const EvalResult e = same_weights ? *final_eval_ : reps_.evaluate(true);
      r.final_val_loss = e.loss;
      r.final_val_accuracy = e.accuracy;
      r.confusion = e.confusion;
      if (regression_) {
        r.final_val_rmse = e.rmse();
        r.final_val_mae = e.mae;
        r.final_val_r2 = e.r2();
      }
    }
    if (!control_.model_path.empty()) {
      ModelFile model = model_file_of(cfg_, *data_, net_);
      model.sweep = control_.identity.sweep;
      model.trial = control_.identity.trial;
      write_model_file(control_.model_path, model);
    }
    return r;
  }

  const TrainConfig& cfg_;
  const TrainingSpec& t_;
  TrainCallback& cb_;
  const RunControl& control_;
  Monitor monitor_;
  LearningRateSchedule schedule_;
  std::shared_ptr<const LoadedData> data_;
  ReplicaSet reps_;
  Backend* backend_;  // the first replica's: weights, statistics and checkpoints are read there
  Network& net_;
  Optimizer& opt_;
  std::int64_t ipe_, total_iters_;
  bool regression_;  // the data's targets are float values: mean squared error, no accuracy
  DeviceBuffer best_params_, best_state_;
  bool keep_best_ = false;

  StepGraph graph_;
  LoopState st_;
  bool epoch_begun_ = false;  // begin_epoch ran for st_.epoch
  double step_lr_ = 0;        // the launched step's learning rate and images
  int step_batch_ = 0;
  std::int64_t pending_images_ = 0;  // trained since the last drain_stats
  bool weights_finite_ = true;       // as of the last drain_stats
  Clock::time_point start_, last_report_time_;
  std::int64_t last_report_images_ = 0;
  std::string message_;
  std::optional<EvalResult> final_eval_;  // the validation after the last step, with confusion
  std::optional<Owed> owed_;              // what the last after_step() left to do
};

TrialRun::TrialRun(const TrainConfig& cfg, std::shared_ptr<const LoadedData> data,
                   TrainCallback& cb, const RunControl& control)
    : impl_(std::make_unique<Impl>(cfg, std::move(data), cb, control)) {}
TrialRun::~TrialRun() = default;
void TrialRun::start() { impl_->start(); }
bool TrialRun::epochs_done() const { return impl_->epochs_done(); }
std::optional<RunState> TrialRun::launch_step() { return impl_->launch_step(true); }
void TrialRun::launch_step_unchecked() {
  if (impl_->launch_step(false)) throw Error("internal: an unchecked step ended its run");
}
bool TrialRun::next_step_is_costly() const { return impl_->next_step_is_costly(); }
std::optional<RunState> TrialRun::complete_step() { return impl_->complete_step(false); }
std::optional<RunState> TrialRun::complete_step_launching_validation() {
  return impl_->complete_step(true);
}
std::optional<RunState> TrialRun::complete_validation() { return impl_->complete_validation(); }
bool TrialRun::owes_validation() const { return impl_->owes_validation(); }
TrainResult TrialRun::finish(RunState state) { return impl_->finish(state); }

}  // namespace sweep::trainer
