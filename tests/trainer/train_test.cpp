/*
 * train_test.cpp — the training loop on the CPU backend with small synthetic data: callbacks,
 * stopping (callback, patience, divergence), best-network output, determinism, interrupt and
 * resume bit for bit.
 *
 * Weights are compared through checkpoint files (read_checkpoint), the one place where a run's
 * parameters leave the engine; that also exercises the checkpoint path the resume test relies on.
 */
#include "trainer/train.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <functional>
#include <numeric>

#include "common/check.h"
#include "tests/trainer/layer_spec_util.h"
#include "tests/trainer/recorder.h"
#include "tests/trainer/small_convnet_config.h"
#include "trainer/checkpoint.h"

namespace sweep::trainer {
namespace {

namespace fs = std::filesystem;

using test::layer;

// With batch norm and dropout: every kind of state a checkpoint must carry.
TrainConfig small_config() { return test::small_convnet_config(true, true, 3); }

std::string temp_path(const std::string& name) {
  return (fs::temp_directory_path() / ("sweep_train_" + std::to_string(::getpid()) + "_" + name))
      .string();
}

using test::Recorder;

TEST(Train, CallbackSeesEveryIterationAndEveryValidation) {
  TrainConfig c = small_config();
  Recorder rec;
  const TrainResult r = train(c, rec);
  EXPECT_EQ(r.state, RunState::completed) << r.message;
  const std::int64_t ipe = 10;  // 9 full batches + one of 12
  ASSERT_EQ(rec.iterations.size(), std::size_t(3 * ipe));
  for (std::size_t i = 0; i < rec.iterations.size(); ++i) {
    const IterationInfo& it = rec.iterations[i];
    EXPECT_EQ(it.iteration, std::int64_t(i) + 1);
    EXPECT_EQ(it.epoch, int(i / ipe) + 1);
    EXPECT_EQ(it.iterations_per_epoch, ipe);
    EXPECT_EQ(it.total_iterations, 3 * ipe);
    const bool due = it.iteration % 4 == 0 || it.iteration % ipe == 0;
    EXPECT_EQ(it.has_loss, due) << "iteration " << it.iteration;
    if (it.has_loss) {
      EXPECT_TRUE(std::isfinite(it.train_loss));
      EXPECT_GE(it.train_accuracy, 0.0);
      EXPECT_LE(it.train_accuracy, 1.0);
    }
  }
  ASSERT_EQ(rec.validations.size(), 3u);  // once per epoch
  for (int e = 0; e < 3; ++e) {
    EXPECT_EQ(rec.validations[std::size_t(e)].epoch, e + 1);
    EXPECT_TRUE(rec.validations[std::size_t(e)].epoch_end);
    EXPECT_EQ(rec.validations[std::size_t(e)].iteration, (e + 1) * ipe);
  }
  EXPECT_EQ(r.iterations, 3 * ipe);
  EXPECT_EQ(r.epochs_completed, 3);
  EXPECT_GT(r.final_val_accuracy, 0.3);  // learns: chance is 0.1
  EXPECT_LT(rec.validations.back().val_loss, rec.validations.front().val_loss * 1.05);
  // Confusion matrix of the output network: sums to the validation size, its trace is the accuracy.
  ASSERT_EQ(r.confusion.size(), 100u);
  EXPECT_EQ(std::accumulate(r.confusion.begin(), r.confusion.end(), std::int64_t(0)), 100);
  std::int64_t trace = 0;
  for (int k = 0; k < 10; ++k) trace += r.confusion[std::size_t(k) * 10 + k];
  EXPECT_NEAR(double(trace) / 100.0, r.final_val_accuracy, 1e-12);
  // output_network: best — the final evaluation is of the best validation's network.
  EXPECT_NEAR(r.final_val_loss, r.best_val_loss, 1e-5);
  EXPECT_NEAR(r.final_val_accuracy, r.best_val_accuracy, 1e-12);
}

TEST(Train, OutputLastWithHoldoutEvaluatesTheLastNetwork) {
  TrainConfig c = small_config();
  c.data.validation = sweep::trainer::Validation::holdout;
  c.data.holdout_fraction = 0.2;  // 240 train (7 x 32 + 16: 8 batches), 60 validation
  c.training.output_network = sweep::trainer::OutputNetwork::last;
  Recorder rec;
  const TrainResult r = train(c, rec);
  ASSERT_EQ(rec.validations.size(), 3u);
  EXPECT_EQ(rec.iterations.front().iterations_per_epoch, 8);
  EXPECT_NEAR(r.final_val_loss, rec.validations.back().val_loss, 1e-6);
  EXPECT_EQ(r.final_val_accuracy, rec.validations.back().val_accuracy);
  EXPECT_EQ(std::accumulate(r.confusion.begin(), r.confusion.end(), std::int64_t(0)), 60);
}

// The last step's validation doubles as the final evaluation only when it evaluated the output
// network: with output_network best and the best epoch an earlier one, the final numbers are the
// best epoch's, evaluated again on its restored weights.
TEST(Train, OutputBestFromAnEarlierEpochEvaluatesThatNetwork) {
  TrainConfig c = small_config();
  c.training.output_network = sweep::trainer::OutputNetwork::best;
  // Only the first validation counts as an improvement (accuracy never gains 2), without stopping.
  c.training.early_stopping.monitor = sweep::trainer::MonitorMetric::val_accuracy;
  c.training.early_stopping.min_delta = 2.0;
  Recorder rec;
  const TrainResult r = train(c, rec);
  ASSERT_EQ(rec.validations.size(), 3u);
  EXPECT_EQ(r.best_epoch, 1);
  EXPECT_NEAR(r.final_val_loss, rec.validations.front().val_loss, 1e-6);
  EXPECT_EQ(r.final_val_accuracy, rec.validations.front().val_accuracy);
  EXPECT_NE(r.final_val_loss, rec.validations.back().val_loss);  // the weights moved after epoch 1
  EXPECT_EQ(std::accumulate(r.confusion.begin(), r.confusion.end(), std::int64_t(0)), 100);
}

TEST(Train, ValidationFrequencyInIterations) {
  TrainConfig c = small_config();
  c.training.validation_frequency = 7;
  c.training.epochs = 2;
  Recorder rec;
  train(c, rec);
  std::vector<std::int64_t> at;
  for (const auto& v : rec.validations) at.push_back(v.iteration);
  EXPECT_EQ(at, (std::vector<std::int64_t>{7, 14, 20}));  // every 7, and the last iteration
}

TEST(Train, StopViaCallback) {
  TrainConfig c = small_config();
  Recorder rec;
  rec.on_iter = [](const IterationInfo& i) { return i.iteration < 5; };
  const TrainResult r = train(c, rec);
  EXPECT_EQ(r.state, RunState::stopped_by_callback);
  EXPECT_EQ(r.iterations, 5);
  EXPECT_EQ(rec.iterations.size(), 5u);
  EXPECT_NE(r.message.find("callback"), std::string::npos) << r.message;
}

TEST(Train, PatienceStopsWhenNothingImproves) {
  TrainConfig c = small_config();
  // Rounds to a float step of 0 (a rate of 0 is refused): the validation loss cannot improve.
  c.training.learning_rate = 1e-300;
  c.training.epochs = 10;
  c.training.early_stopping.patience = 2;
  Recorder rec;
  const TrainResult r = train(c, rec);
  EXPECT_EQ(r.state, RunState::early_stopped) << r.message;
  EXPECT_EQ(r.epochs_completed, 3);  // best at 1, no improvement at 2 and 3
  EXPECT_EQ(rec.validations.size(), 3u);
  EXPECT_EQ(r.best_epoch, 1);
  EXPECT_NE(r.message.find("val_loss"), std::string::npos) << r.message;
}

TEST(Train, PatienceOnValAccuracyWithMinDelta) {
  TrainConfig c = small_config();
  c.training.epochs = 6;
  c.training.early_stopping = {1, MonitorMetric::val_accuracy,
                               2.0};  // nothing beats the best by 2.0
  Recorder rec;
  const TrainResult r = train(c, rec);
  EXPECT_EQ(r.state, RunState::early_stopped);
  EXPECT_EQ(r.epochs_completed, 2);
}

TEST(Train, TrainLossMonitorWithoutValidationSet) {
  TrainConfig c = small_config();
  c.data.validation = sweep::trainer::Validation::none;
  c.training.early_stopping = {2, MonitorMetric::train_loss, 0.0};
  Recorder rec;
  const TrainResult r = train(c, rec);
  EXPECT_EQ(r.state, RunState::completed) << r.message;
  EXPECT_TRUE(rec.validations.empty());  // no val_* numbers to report
  EXPECT_TRUE(r.confusion.empty());
  c.training.early_stopping = {2, MonitorMetric::val_loss, 0.0};
  EXPECT_THROW(train(c, rec), Error);
}

TEST(Train, HugeLearningRateDivergesWithoutThrowing) {
  TrainConfig c = small_config();
  // Without the batch norm: it renormalises activations, so a net with it can keep a finite
  // (if absurd, ~1e12) loss while its weights grow towards 1e35, which is not NaN / Inf.
  c.model.layers.erase(c.model.layers.begin() + 1);
  ASSERT_EQ(c.model.layers[1].type, LayerKind::relu);
  c.training.learning_rate = 1e12;
  c.training.epochs = 5;
  Recorder rec;
  TrainResult r;
  ASSERT_NO_THROW(r = train(c, rec));
  EXPECT_EQ(r.state, RunState::diverged) << r.message;
  EXPECT_NE(r.message.find("NaN or Inf"), std::string::npos) << r.message;
  EXPECT_LT(r.iterations, 5 * 10);
}

TEST(Train, SameSeedSameWeightsOtherSeedOtherWeights) {
  const std::string a = temp_path("det_a"), b = temp_path("det_b"), o = temp_path("det_o");
  TrainConfig c = small_config();
  c.data.augment = {true, 2, 0};
  c.training.checkpoint.every_epochs = 1;
  c.device.threads = 2;  // parallel reductions must not make results depend on timing
  Recorder rec;
  train(c, rec, RunControl{a, false, nullptr, {}});
  train(c, rec, RunControl{b, false, nullptr, {}});
  c.training.seed = 12;
  train(c, rec, RunControl{o, false, nullptr, {}});
  const CheckpointData ca = read_checkpoint(a), cb = read_checkpoint(b), co = read_checkpoint(o);
  EXPECT_EQ(ca.params, cb.params);
  EXPECT_EQ(ca.state, cb.state);
  EXPECT_NE(ca.params, co.params);
  for (const auto& p : {a, b, o}) fs::remove(p);
}

// Runs `c` straight through, and again interrupted after `stop_after` iterations then resumed;
// expects the final checkpoints to match byte for byte.
void expect_resume_bit_identical(TrainConfig c, std::int64_t stop_after, const std::string& tag) {
  const std::string straight = temp_path(tag + "_straight"), resumed = temp_path(tag + "_resumed");
  c.training.checkpoint.every_epochs = c.training.epochs;  // a checkpoint at the very end
  Recorder rec;
  const TrainResult full = train(c, rec, RunControl{straight, false, nullptr, {}});
  ASSERT_EQ(full.state, RunState::completed);

  std::atomic<bool> stop{false};
  Recorder first;
  first.on_iter = [&](const IterationInfo& i) {
    if (i.iteration == stop_after) stop = true;
    return true;
  };
  const TrainResult part = train(c, first, RunControl{resumed, false, &stop, {}});
  ASSERT_EQ(part.state, RunState::interrupted) << part.message;
  EXPECT_EQ(part.iterations, stop_after);
  EXPECT_NE(part.message.find(resumed), std::string::npos) << part.message;

  Recorder second;
  const TrainResult rest = train(c, second, RunControl{resumed, true, nullptr, {}});
  ASSERT_EQ(rest.state, RunState::completed) << rest.message;
  ASSERT_FALSE(second.iterations.empty());
  EXPECT_EQ(second.iterations.front().iteration, stop_after + 1);
  EXPECT_EQ(rest.iterations, full.iterations);

  // Every logged training loss and accuracy, the one at the step after the interruption too, is
  // the uninterrupted run's to the last bit (the device's pending sums travel in the checkpoint).
  std::vector<IterationInfo> joined = first.iterations;
  joined.insert(joined.end(), second.iterations.begin(), second.iterations.end());
  ASSERT_EQ(joined.size(), rec.iterations.size());
  for (std::size_t i = 0; i < joined.size(); ++i) {
    ASSERT_EQ(joined[i].iteration, rec.iterations[i].iteration);
    EXPECT_EQ(joined[i].has_loss, rec.iterations[i].has_loss) << "iteration " << i + 1;
    EXPECT_EQ(joined[i].train_loss, rec.iterations[i].train_loss) << "iteration " << i + 1;
    EXPECT_EQ(joined[i].train_accuracy, rec.iterations[i].train_accuracy) << "iteration " << i + 1;
  }
  std::vector<ValidationInfo> validations = first.validations;
  validations.insert(validations.end(), second.validations.begin(), second.validations.end());
  ASSERT_EQ(validations.size(), rec.validations.size());
  for (std::size_t i = 0; i < validations.size(); ++i) {
    EXPECT_EQ(validations[i].train_loss, rec.validations[i].train_loss) << "validation " << i;
    EXPECT_EQ(validations[i].val_loss, rec.validations[i].val_loss) << "validation " << i;
  }

  const CheckpointData s = read_checkpoint(straight), r = read_checkpoint(resumed);
  EXPECT_EQ(0, std::memcmp(s.params.data(), r.params.data(), s.params.size() * sizeof(float)));
  EXPECT_EQ(s.params, r.params);
  EXPECT_EQ(s.state, r.state);
  EXPECT_EQ(s.optimizer_state1, r.optimizer_state1);
  EXPECT_EQ(s.optimizer_state2, r.optimizer_state2);
  EXPECT_EQ(s.best_params, r.best_params);
  EXPECT_EQ(full.final_val_loss, rest.final_val_loss);
  EXPECT_EQ(full.best_epoch, rest.best_epoch);
  fs::remove(straight);
  fs::remove(resumed);
}

TEST(Train, ResumeAfterOneEpochIsBitIdentical) {
  TrainConfig c = small_config();
  c.training.epochs = 2;
  c.data.augment = {true, 1, 0};
  expect_resume_bit_identical(c, 10, "epoch");  // 1 epoch + checkpoint + resume 1 epoch
}

TEST(Train, ResumeMidEpochWithAdamAndScheduleIsBitIdentical) {
  TrainConfig c = small_config();
  c.training.optimizer = sweep::trainer::OptimizerKind::adam;
  c.training.learning_rate = 0.003;
  c.training.schedule.type = sweep::trainer::ScheduleType::cosine;
  c.training.schedule.warmup_epochs = 0.5;
  c.training.gradient_clip = 1.0;
  c.data.shuffle = sweep::trainer::ShuffleMode::once;
  expect_resume_bit_identical(c, 13, "mid");
}

// Interrupted between two log points (log_every 4, stopped after iteration 14): the device holds
// two steps' loss sums that the checkpoint must carry without adding them in another order.
TEST(Train, ResumeBetweenLogPointsLogsTheSameLossBitForBit) {
  TrainConfig c = small_config();
  c.training.epochs = 2;
  expect_resume_bit_identical(c, 14, "between_logs");
}

// A residual network's parameters and batch-norm statistics (its blocks' and their projections'
// slices of the flat buffers) and a dropout inside a block survive a checkpoint and a resume.
TEST(Train, ResumeOfAResidualNetworkIsBitIdentical) {
  TrainConfig c = small_config();
  c.training.epochs = 2;
  LayerSpec inner = layer("residual");
  inner.layers = {layer("conv", {{"filters", 4}, {"kernel", 3}, {"padding", 1}}),
                  layer("batchnorm"), layer("relu"), layer("dropout", {{"rate", 0.25}}),
                  layer("conv", {{"filters", 4}, {"kernel", 3}, {"padding", 1}})};
  LayerSpec down = layer("residual");
  down.layers = {layer("conv", {{"filters", 8}, {"kernel", 3}, {"stride", 2}, {"padding", 1}}),
                 layer("batchnorm")};
  c.model.layers = {layer("conv", {{"filters", 4}, {"kernel", 3}}), inner, down, layer("gap"),
                    layer("dense", {{"units", 10}})};
  expect_resume_bit_identical(c, 13, "residual");
}

TEST(Train, InterruptWithoutCheckpointPathSaysSo) {
  TrainConfig c = small_config();
  std::atomic<bool> stop{true};
  Recorder rec;
  const TrainResult r = train(c, rec, RunControl{"", false, &stop, {}});
  EXPECT_EQ(r.state, RunState::interrupted);
  EXPECT_EQ(r.iterations, 0);
  EXPECT_NE(r.message.find("no checkpoint path"), std::string::npos) << r.message;
}

TEST(Train, ResumeFromAnotherRunsCheckpointIsRefused) {
  const std::string p = temp_path("foreign");
  TrainConfig c = small_config();
  c.training.epochs = 1;
  c.training.checkpoint.every_epochs = 1;
  Recorder rec;
  train(c, rec, RunControl{p, false, nullptr, {}});
  c.model.layers[5].num["units"] = 17;  // another model: another parameter count
  try {
    train(c, rec, RunControl{p, true, nullptr, {}});
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("parameter count"), std::string::npos) << e.what();
  }
  fs::remove(p);
}

TEST(Train, BadSettingsAreErrors) {
  Recorder rec;
  TrainConfig c = small_config();
  c.training.log_every = 0;
  EXPECT_THROW(train(c, rec), Error);
  c = small_config();
  c.data.dataset = sweep::trainer::DatasetKind::mnist;
  c.data.path = "/nonexistent/mnist";
  try {
    train(c, rec);
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/mnist/train-images-idx3-ubyte"),
              std::string::npos);
  }
}

}  // namespace
}  // namespace sweep::trainer
