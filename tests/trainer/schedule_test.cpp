/*
 * schedule_test.cpp — every learning-rate schedule against values computed by hand.
 *
 * Arguments are (epoch, iteration, iterations_per_epoch, total_iterations), 0-based; the expected
 * numbers are written out as arithmetic so a reader can check them without running anything.
 */
#include "trainer/optim/schedule.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <numbers>

#include "common/check.h"

namespace sweep::trainer {
namespace {

ScheduleSpec spec_of(const std::string& type) {
  ScheduleSpec s;
  s.type = *parse_word<ScheduleType>(type);
  return s;
}

TEST(Schedule, Fixed) {
  LearningRateSchedule s(spec_of("fixed"), 0.1);
  EXPECT_DOUBLE_EQ(s.at(0, 0, 10, 100), 0.1);
  EXPECT_DOUBLE_EQ(s.at(9, 99, 10, 100), 0.1);
}

TEST(Schedule, PiecewiseDropsEveryPeriod) {
  ScheduleSpec sp = spec_of("piecewise");
  sp.drop_factor = 0.5;
  sp.drop_period = 3;
  LearningRateSchedule s(sp, 0.2);
  EXPECT_DOUBLE_EQ(s.at(0, 0, 10, 100), 0.2);
  EXPECT_DOUBLE_EQ(s.at(2, 29, 10, 100), 0.2);
  EXPECT_DOUBLE_EQ(s.at(3, 30, 10, 100), 0.1);
  EXPECT_DOUBLE_EQ(s.at(6, 60, 10, 100), 0.05);
}

TEST(Schedule, MultistepAtMilestones) {
  ScheduleSpec sp = spec_of("multistep");
  sp.drop_factor = 0.1;
  sp.milestones = {2, 5};
  LearningRateSchedule s(sp, 1.0);
  EXPECT_DOUBLE_EQ(s.at(1, 19, 10, 100), 1.0);
  EXPECT_NEAR(s.at(2, 20, 10, 100), 0.1, 1e-15);
  EXPECT_NEAR(s.at(4, 49, 10, 100), 0.1, 1e-15);
  EXPECT_NEAR(s.at(5, 50, 10, 100), 0.01, 1e-15);
}

TEST(Schedule, InvAsCaffe) {
  ScheduleSpec sp = spec_of("inv");
  sp.gamma = 0.0001;
  sp.power = 0.75;
  LearningRateSchedule s(sp, 0.01);
  EXPECT_DOUBLE_EQ(s.at(0, 0, 10, 100), 0.01);
  // 0.01 * (1 + 0.0001 * 10000)^-0.75 = 0.01 * 2^-0.75 = 0.0059460355750136
  EXPECT_NEAR(s.at(5, 10000, 10, 100000), 0.0059460355750136, 1e-15);
}

TEST(Schedule, ExpIsPerEpoch) {
  ScheduleSpec sp = spec_of("exp");
  sp.gamma = 0.9;
  LearningRateSchedule s(sp, 0.1);
  EXPECT_DOUBLE_EQ(s.at(0, 5, 10, 100), 0.1);
  EXPECT_NEAR(s.at(1, 15, 10, 100), 0.09, 1e-15);  // same value all through epoch 1
  EXPECT_NEAR(s.at(1, 19, 10, 100), 0.09, 1e-15);
  EXPECT_NEAR(s.at(3, 30, 10, 100), 0.0729, 1e-15);  // 0.1 * 0.9^3
}

TEST(Schedule, PolyAsCaffe) {
  ScheduleSpec sp = spec_of("poly");
  sp.power = 2;
  LearningRateSchedule s(sp, 0.1);
  EXPECT_DOUBLE_EQ(s.at(0, 0, 10, 100), 0.1);
  EXPECT_NEAR(s.at(5, 50, 10, 100), 0.025, 1e-15);  // 0.1 * (1 - 0.5)^2
  EXPECT_NEAR(s.at(9, 90, 10, 100), 0.001, 1e-15);  // 0.1 * 0.1^2
  EXPECT_DOUBLE_EQ(s.at(10, 100, 10, 100), 0.0);
}

TEST(Schedule, CosineToMinLr) {
  ScheduleSpec sp = spec_of("cosine");
  sp.min_lr = 0.01;
  LearningRateSchedule s(sp, 0.11);
  EXPECT_DOUBLE_EQ(s.at(0, 0, 10, 100), 0.11);
  EXPECT_NEAR(s.at(5, 50, 10, 100), 0.06, 1e-15);  // halfway: the middle
  EXPECT_NEAR(s.at(2, 25, 10, 100), 0.01 + 0.1 * (1 + std::sqrt(0.5)) / 2, 1e-15);  // cos(pi/4)
  EXPECT_NEAR(s.at(10, 100, 10, 100), 0.01, 1e-15);
}

TEST(Schedule, LinearWarmupInFrontOfAnySchedule) {
  ScheduleSpec sp = spec_of("cosine");
  sp.warmup_epochs = 0.5;  // 5 iterations at 10 per epoch
  sp.warmup_start_factor = 0.2;
  LearningRateSchedule s(sp, 1.0);
  const double cos_at = [](double i) { return (1 + std::cos(std::numbers::pi * i / 100)) / 2; }(0);
  EXPECT_NEAR(s.at(0, 0, 10, 100), 0.2 * cos_at, 1e-15);
  // iteration 2: factor 0.2 + 0.8 * 2/5 = 0.52, times cosine at 2/100
  EXPECT_NEAR(s.at(0, 2, 10, 100), 0.52 * (1 + std::cos(std::numbers::pi * 0.02)) / 2, 1e-15);
  // iteration 5: the warm-up is over, the plain schedule applies
  EXPECT_NEAR(s.at(0, 5, 10, 100), (1 + std::cos(std::numbers::pi * 0.05)) / 2, 1e-15);

  ScheduleSpec fixed = spec_of("fixed");
  fixed.warmup_epochs = 1;  // start factor 0: from zero
  LearningRateSchedule f(fixed, 0.1);
  EXPECT_DOUBLE_EQ(f.at(0, 0, 4, 40), 0.0);
  EXPECT_NEAR(f.at(0, 3, 4, 40), 0.075, 1e-16);
  EXPECT_DOUBLE_EQ(f.at(1, 4, 4, 40), 0.1);
}

TEST(Schedule, BadSpecsAreErrors) {
  EXPECT_FALSE(parse_word<ScheduleType>("triangular"));
  ScheduleSpec sp = spec_of("piecewise");
  sp.drop_period = 0;
  EXPECT_THROW(LearningRateSchedule(sp, 0.1), Error);
  ScheduleSpec w = spec_of("fixed");
  w.warmup_start_factor = 2;
  EXPECT_THROW(LearningRateSchedule(w, 0.1), Error);
  EXPECT_THROW(LearningRateSchedule(spec_of("fixed"), -0.1), Error);
  EXPECT_THROW(LearningRateSchedule(spec_of("fixed"), std::numeric_limits<double>::infinity()),
               Error);
}

// The YAML reader's rule (the key table's range > 0), with its words: a rate of 0 trains nothing.
TEST(Schedule, ALearningRateOfZeroIsRefusedAsTheReaderRefusesIt) {
  try {
    LearningRateSchedule(spec_of("fixed"), 0.0);
    FAIL() << "a learning rate of 0 was accepted";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "key 'training.learning_rate': must be > 0, got 0");
  }
  EXPECT_NO_THROW(LearningRateSchedule(spec_of("fixed"), 1e-300));
}

}  // namespace
}  // namespace sweep::trainer
