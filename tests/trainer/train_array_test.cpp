/*
 * train_array_test.cpp — fused arrays on the CPU backend: every member's losses, validations and
 * weights are its lone run's bit for bit (LeNet-like and batch-norm nets, different learning
 * rates, momenta, seeds, optimizers' settings), a diverging member leaves the others untouched, a
 * member stopped by its callback or interrupted ends at once and alone, an array trained in waves
 * (max_active) gives the same numbers, checkpoints are interchangeable with lone runs', and shapes
 * that differ are refused. fusion_split says which keys split an array.
 */
#include "trainer/array/train_array.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "common/check.h"
#include "tests/trainer/layer_spec_util.h"
#include "tests/trainer/recorder.h"
#include "trainer/array/fusion.h"
#include "trainer/checkpoint.h"

namespace sweep::trainer {
namespace {

namespace fs = std::filesystem;
using test::layer;

TrainConfig base_config(bool batch_norm) {
  TrainConfig c;
  c.data.dataset = DatasetKind::synthetic;
  c.data.synthetic.train_size = 200;
  c.data.synthetic.test_size = 64;
  c.data.synthetic.height = 10;
  c.data.synthetic.width = 10;
  c.data.synthetic.seed = 5;
  c.data.augment = {true, 1, 0};  // augmentation draws are per member (its seed)
  c.model.preset = Preset::none;
  c.model.layers = {layer("conv", {{"filters", 4}, {"kernel", 3}}),
                    layer("relu"),
                    layer("maxpool", {{"size", 2}, {"stride", 2}}),
                    layer("flatten"),
                    layer("dense", {{"units", 12}}),
                    layer("relu"),
                    layer("dense", {{"units", 10}})};
  if (batch_norm) c.model.layers.insert(c.model.layers.begin() + 1, layer("batchnorm"));
  c.training.batch_size = 32;  // 200 = 6 * 32 + 8: a partial last batch each epoch
  c.training.epochs = 3;
  c.training.log_every = 3;
  c.training.checkpoint.every_epochs = 1;
  c.device = DeviceSpec{DeviceKind::cpu, 0, 1};
  return c;
}

// Four members that differ in everything an array lets differ.
std::vector<TrainConfig> four_members(bool batch_norm) {
  std::vector<TrainConfig> configs(4, base_config(batch_norm));
  const double rates[] = {0.01, 0.05, 0.1, 0.02};
  const double momenta[] = {0.9, 0.0, 0.5, 0.95};
  for (int i = 0; i < 4; ++i) {
    configs[i].training.learning_rate = rates[i];
    configs[i].training.momentum = momenta[i];
    configs[i].training.seed = 100 + i;
    configs[i].training.weight_decay = i * 1e-3;
  }
  configs[2].training.nesterov = true;
  configs[3].training.gradient_clip = 0.5;
  configs[3].training.schedule.type = ScheduleType::cosine;
  return configs;
}

std::string temp_path(const std::string& name) {
  return (fs::temp_directory_path() /
          ("sweep_array_" + std::to_string(::getpid()) + "_" + name + ".bin"))
      .string();
}

using test::Recorder;

// What a run leaves: its reports, its result and its last checkpoint.
struct Trace {
  std::vector<IterationInfo> iterations;
  std::vector<ValidationInfo> validations;
  TrainResult result;
  CheckpointData checkpoint;
};

Trace alone(const TrainConfig& c, const std::string& tag) {
  const std::string path = temp_path(tag);
  Recorder rec;
  Trace t;
  t.result = train(c, rec, RunControl{path, false, nullptr, {}});
  t.iterations = rec.iterations;
  t.validations = rec.validations;
  if (fs::exists(path)) t.checkpoint = read_checkpoint(path);
  fs::remove(path);
  return t;
}

struct ArrayTraces {
  ArrayReport report;
  std::vector<Trace> traces;
  std::vector<std::size_t> finish_order;
  std::vector<std::exception_ptr> errors;
};

ArrayTraces fused(const std::vector<TrainConfig>& configs, const std::string& tag,
                  ArrayOptions options = {},
                  std::vector<std::function<bool(const IterationInfo&)>> stops = {},
                  std::vector<const std::atomic<bool>*> interrupts = {}) {
  std::vector<Recorder> recs(configs.size());
  std::vector<ArrayMember> members;
  for (std::size_t i = 0; i < configs.size(); ++i) {
    if (i < stops.size() && stops[i]) recs[i].on_iter = stops[i];
    ArrayMember m;
    m.config = configs[i];
    m.callback = &recs[i];
    m.control.checkpoint_path = temp_path(tag + std::to_string(i));
    if (i < interrupts.size()) m.control.interrupt = interrupts[i];
    members.push_back(m);
  }
  ArrayTraces out;
  out.traces.resize(configs.size());
  out.errors.resize(configs.size());
  out.report = train_array(
      members,
      [&](std::size_t i, MemberEnd end) {
        out.finish_order.push_back(i);
        out.errors[i] = end.error;
        out.traces[i].result = end.result;
        out.traces[i].iterations = recs[i].iterations;
        out.traces[i].validations = recs[i].validations;
        if (fs::exists(members[i].control.checkpoint_path))
          out.traces[i].checkpoint = read_checkpoint(members[i].control.checkpoint_path);
        fs::remove(members[i].control.checkpoint_path);
      },
      options);
  return out;
}

void expect_same(const Trace& a, const Trace& lone, const std::string& who) {
  ASSERT_EQ(a.iterations.size(), lone.iterations.size()) << who;
  for (std::size_t i = 0; i < a.iterations.size(); ++i) {
    EXPECT_EQ(a.iterations[i].iteration, lone.iterations[i].iteration) << who;
    EXPECT_EQ(a.iterations[i].train_loss, lone.iterations[i].train_loss) << who << " it " << i;
    EXPECT_EQ(a.iterations[i].train_accuracy, lone.iterations[i].train_accuracy) << who;
    EXPECT_EQ(a.iterations[i].learning_rate, lone.iterations[i].learning_rate) << who;
  }
  ASSERT_EQ(a.validations.size(), lone.validations.size()) << who;
  for (std::size_t i = 0; i < a.validations.size(); ++i) {
    EXPECT_EQ(a.validations[i].val_loss, lone.validations[i].val_loss) << who;
    EXPECT_EQ(a.validations[i].val_accuracy, lone.validations[i].val_accuracy) << who;
  }
  EXPECT_EQ(a.result.state, lone.result.state) << who << ": " << a.result.message;
  EXPECT_EQ(a.result.iterations, lone.result.iterations) << who;
  EXPECT_EQ(a.result.final_val_loss, lone.result.final_val_loss) << who;
  EXPECT_EQ(a.result.best_epoch, lone.result.best_epoch) << who;
  EXPECT_EQ(a.result.confusion, lone.result.confusion) << who;
  EXPECT_EQ(a.checkpoint.params, lone.checkpoint.params) << who;
  EXPECT_EQ(a.checkpoint.state, lone.checkpoint.state) << who;
  EXPECT_EQ(a.checkpoint.optimizer_state1, lone.checkpoint.optimizer_state1) << who;
}

void expect_each_member_as_alone(bool batch_norm, const std::string& tag) {
  const std::vector<TrainConfig> configs = four_members(batch_norm);
  const ArrayTraces array = fused(configs, tag);
  EXPECT_EQ(array.report.most_active, 4u);
  for (std::size_t i = 0; i < configs.size(); ++i) {
    ASSERT_FALSE(array.errors[i]) << "member " << i;
    const Trace lone = alone(configs[i], tag + "_lone" + std::to_string(i));
    ASSERT_FALSE(lone.iterations.empty());
    expect_same(array.traces[i], lone, "member " + std::to_string(i));
  }
  // The members really differ: the array did not train one model four times.
  EXPECT_NE(array.traces[0].checkpoint.params, array.traces[1].checkpoint.params);
}

TEST(TrainArray, EachMemberOfAPlainNetIsItsLoneRunBitForBit) {
  expect_each_member_as_alone(false, "plain");
}

TEST(TrainArray, EachMemberOfABatchNormNetIsItsLoneRunBitForBit) {
  expect_each_member_as_alone(true, "bn");
}

// Regression members (float features, one output, mean squared error): each is its lone run.
TEST(TrainArray, EachMemberOfARegressionNetIsItsLoneRunBitForBit) {
  std::vector<TrainConfig> configs = four_members(false);
  for (TrainConfig& c : configs) {
    c.data.task = Task::regression;
    c.model.layers.pop_back();  // the dense to 10 classes; the loop appends the one output
  }
  const ArrayTraces array = fused(configs, "regression");
  for (std::size_t i = 0; i < configs.size(); ++i) {
    ASSERT_FALSE(array.errors[i]) << "member " << i;
    const Trace lone = alone(configs[i], "regression_lone" + std::to_string(i));
    ASSERT_FALSE(lone.validations.empty());
    expect_same(array.traces[i], lone, "member " + std::to_string(i));
    EXPECT_TRUE(array.traces[i].result.regression);
    EXPECT_EQ(array.traces[i].result.final_val_r2, lone.result.final_val_r2);
    EXPECT_EQ(array.traces[i].validations.back().val_mae, lone.validations.back().val_mae);
    EXPECT_GT(lone.validations.back().val_rmse, 0.0);
  }
  EXPECT_NE(array.traces[0].checkpoint.params, array.traces[1].checkpoint.params);
}

TEST(TrainArray, ADivergingMemberEndsAloneAndTheOthersAreUntouched) {
  std::vector<TrainConfig> configs = four_members(false);
  configs[1].training.learning_rate = 1e12;
  configs[1].training.gradient_clip = 0;
  const ArrayTraces array = fused(configs, "nan");
  EXPECT_EQ(array.traces[1].result.state, RunState::diverged);
  EXPECT_EQ(array.finish_order.front(), 1u);  // ended at once, before the others
  for (std::size_t i : {0u, 2u, 3u})
    expect_same(array.traces[i], alone(configs[i], "nan_lone" + std::to_string(i)),
                "member " + std::to_string(i));
}

TEST(TrainArray, AMemberStoppedByItsCallbackEndsAtOnceAndAlone) {
  const std::vector<TrainConfig> configs = four_members(false);
  const auto stop_at_8 = [](const IterationInfo& i) { return i.iteration < 8; };
  const ArrayTraces array = fused(configs, "stop", {}, {nullptr, nullptr, stop_at_8});
  EXPECT_EQ(array.traces[2].result.state, RunState::stopped_by_callback);
  EXPECT_EQ(array.traces[2].result.iterations, 8);
  EXPECT_EQ(array.finish_order.front(), 2u);
  for (std::size_t i : {0u, 1u, 3u})
    expect_same(array.traces[i], alone(configs[i], "stop_lone" + std::to_string(i)),
                "member " + std::to_string(i));
}

// The reports of an array come in rounds: every member's step s (in member order), then the
// validations that fell due at it (in member order), then step s + 1. A member's next step may
// go to the device as soon as its own reads are done (train_array.cpp), but its callbacks still
// wait for the round: what a sweep's stopping rules see at step s is the same in every run.
TEST(TrainArray, MembersReportInRoundsInMemberOrder) {
  std::vector<TrainConfig> configs = four_members(false);
  for (TrainConfig& c : configs) c.training.log_every = 1;
  struct Event {
    std::size_t member;
    std::int64_t iteration;
    bool validation;
  };
  std::vector<Event> events;
  struct Logger : TrainCallback {
    std::vector<Event>* events = nullptr;
    std::size_t member = 0;
    bool on_iteration(const IterationInfo& i) override {
      events->push_back({member, i.iteration, false});
      return true;
    }
    bool on_validation(const ValidationInfo& v) override {
      events->push_back({member, v.iteration, true});
      return true;
    }
  };
  std::vector<Logger> loggers(configs.size());
  std::vector<ArrayMember> members(configs.size());
  for (std::size_t i = 0; i < configs.size(); ++i) {
    loggers[i].events = &events;
    loggers[i].member = i;
    members[i].config = configs[i];
    members[i].callback = &loggers[i];
  }
  train_array(members,
              [&](std::size_t i, MemberEnd end) { EXPECT_FALSE(end.error) << "member " << i; });
  // 3 epochs of 7 steps, a validation after each epoch: 21 steps and 3 validations a member.
  ASSERT_EQ(events.size(), configs.size() * (21 + 3));
  std::size_t e = 0;
  for (std::int64_t step = 1; step <= 21; ++step) {
    for (std::size_t m = 0; m < configs.size(); ++m, ++e) {
      EXPECT_EQ(events[e].member, m) << "step " << step;
      EXPECT_EQ(events[e].iteration, step) << "member " << m;
      EXPECT_FALSE(events[e].validation) << "member " << m << " step " << step;
    }
    if (step % 7 != 0) continue;
    for (std::size_t m = 0; m < configs.size(); ++m, ++e) {
      EXPECT_EQ(events[e].member, m) << "validation at step " << step;
      EXPECT_EQ(events[e].iteration, step) << "member " << m;
      EXPECT_TRUE(events[e].validation) << "member " << m << " step " << step;
    }
  }
}

TEST(TrainArray, InWavesWhenFewerFitTheNumbersAreTheSame) {
  const std::vector<TrainConfig> configs = four_members(true);
  const ArrayTraces waves = fused(configs, "waves", ArrayOptions{2});
  for (std::size_t i = 0; i < configs.size(); ++i)
    expect_same(waves.traces[i], alone(configs[i], "waves_lone" + std::to_string(i)),
                "member " + std::to_string(i));
  // Two at a time: the first two end before the last two start.
  EXPECT_EQ(waves.report.most_active, 2u);
  ASSERT_EQ(waves.finish_order.size(), 4u);
  EXPECT_LT(std::max(waves.finish_order[0], waves.finish_order[1]), 2u);
}

TEST(TrainArray, AnInterruptedMembersCheckpointResumesAloneAsIfNeverStopped) {
  std::vector<TrainConfig> configs = four_members(true);
  std::atomic<bool> stop{false};
  const std::string path = temp_path("interrupt_member");
  std::vector<Recorder> recs(2);
  recs[1].on_iter = [&](const IterationInfo& i) {
    if (i.iteration == 10) stop = true;  // mid-epoch 2
    return true;
  };
  std::vector<ArrayMember> members(2);
  for (int i = 0; i < 2; ++i) {
    members[i].config = configs[i];
    members[i].callback = &recs[i];
    members[i].control.checkpoint_path = temp_path("interrupt_other" + std::to_string(i));
  }
  members[1].control.checkpoint_path = path;
  members[1].control.interrupt = &stop;
  std::vector<TrainResult> results(2);
  train_array(members, [&](std::size_t i, MemberEnd end) {
    ASSERT_FALSE(end.error);
    results[i] = end.result;
  });
  EXPECT_EQ(results[1].state, RunState::interrupted);
  EXPECT_EQ(results[0].state, RunState::completed);
  fs::remove(members[0].control.checkpoint_path);

  // The member's checkpoint is an ordinary one: train() resumes it alone.
  Recorder rest;
  const TrainResult resumed = train(configs[1], rest, RunControl{path, true, nullptr, {}});
  ASSERT_EQ(resumed.state, RunState::completed) << resumed.message;
  const CheckpointData after = read_checkpoint(path);
  fs::remove(path);
  const Trace lone = alone(configs[1], "interrupt_lone");
  EXPECT_EQ(after.params, lone.checkpoint.params);
  EXPECT_EQ(resumed.final_val_loss, lone.result.final_val_loss);
}

TEST(TrainArray, MembersOfDifferentShapesAreRefusedBeforeTraining) {
  std::vector<TrainConfig> configs = four_members(false);
  configs[3].training.batch_size = 16;
  try {
    fused(configs, "shape");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("member 3 differs from member 0 in the batch size"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(train_array({}, [](std::size_t, MemberEnd) {}), Error);
  ArrayMember no_callback;
  EXPECT_THROW(train_array({no_callback}, [](std::size_t, MemberEnd) {}), Error);
}

TEST(Fusion, WhatSplitsAnArrayAndWhatDoesNot) {
  const TrainConfig a = base_config(false);
  TrainConfig b = a;
  b.training.learning_rate = 0.3;
  b.training.momentum = 0.1;
  b.training.nesterov = true;
  b.training.weight_decay = 0.01;
  b.training.beta1 = 0.8;
  b.training.beta2 = 0.99;
  b.training.epsilon = 1e-6;
  b.training.rms_decay = 0.9;
  b.training.gradient_clip = 1;
  b.training.schedule.type = ScheduleType::cosine;
  b.training.seed = 99;
  b.training.early_stopping.patience = 2;
  b.model.dropout = 0.5;
  EXPECT_EQ(fusion_split(a, b), "");
  auto split = [&](const std::function<void(TrainConfig&)>& change) {
    TrainConfig c = a;
    change(c);
    return fusion_split(a, c);
  };
  EXPECT_EQ(split([](TrainConfig& c) { c.training.batch_size = 8; }), "the batch size");
  EXPECT_EQ(split([](TrainConfig& c) { c.training.epochs = 9; }), "the epochs");
  EXPECT_EQ(split([](TrainConfig& c) { c.training.optimizer = OptimizerKind::adam; }),
            "the optimizer");
  EXPECT_EQ(split([](TrainConfig& c) { c.training.precision = Precision::bf16; }), "the precision");
  EXPECT_EQ(split([](TrainConfig& c) { c.model.layers.pop_back(); }), "the model");
  EXPECT_EQ(split([](TrainConfig& c) { c.data.synthetic.seed = 7; }), "the data");
  EXPECT_EQ(split([](TrainConfig& c) { c.device.index = 1; }), "the device");
  // The seed splits the data (not the array) only when it draws a holdout.
  TrainConfig h = a;
  h.data.validation = Validation::holdout;
  TrainConfig h2 = h;
  h2.training.seed = 7;
  EXPECT_TRUE(same_loaded_data(a, b));
  EXPECT_FALSE(same_loaded_data(h, h2));
  EXPECT_EQ(fusion_split(h, h2), "");
}

}  // namespace
}  // namespace sweep::trainer
