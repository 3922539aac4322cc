// Where an external trainer's metric lines are kept (scheduler/metric_steps.h): the printed step
// while it moves forward, the run's next step when a line would overwrite a value of this run.
#include "scheduler/metric_steps.h"

#include <gtest/gtest.h>

namespace sweep::scheduler {
namespace {

TEST(StepPlacer, StepsThatMoveForwardAreKeptAsPrinted) {
  StepPlacer steps;
  EXPECT_EQ(steps.place(0, std::nullopt, {"loss"}).step, 0);
  EXPECT_EQ(steps.place(10, std::nullopt, {"loss"}).step, 10);
  // The same step again for other metrics (train and validation lines of one step) stays there.
  const StepPlacer::Placed validation = steps.place(10, std::nullopt, {"val_accuracy"});
  EXPECT_EQ(validation.step, 10);
  EXPECT_EQ(validation.note, "");
  EXPECT_EQ(steps.place(30, 1, {"loss"}).step, 30);
  EXPECT_EQ(steps.place(40, 2, {"loss"}).step, 40);  // a new epoch at a larger step
}

// A batch index that starts again every epoch: every line keeps its value, epoch 2's after epoch
// 1's, and the log is told once.
TEST(StepPlacer, AStepCountedWithinEachEpochKeepsEveryLine) {
  StepPlacer steps;
  std::vector<std::int64_t> placed;
  std::vector<std::string> notes;
  for (std::int64_t epoch = 1; epoch <= 3; ++epoch)
    for (std::int64_t batch = 0; batch < 4; ++batch) {
      const StepPlacer::Placed p = steps.place(batch, epoch, {"val_accuracy"});
      EXPECT_EQ(p.problem, "");
      placed.push_back(p.step);
      if (!p.note.empty()) notes.push_back(p.note);
    }
  EXPECT_EQ(placed, (std::vector<std::int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}));
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0],
            "metric lines: step 0 again in epoch 2 (a step counted within each epoch); every "
            "value is kept: from this line on, points go after the steps already kept (this one "
            "at step 4), not at the printed steps");
}

// The same step in a later epoch, even for a metric not yet given there, is a new position.
TEST(StepPlacer, TheSameStepInALaterEpochIsANewPosition) {
  StepPlacer steps;
  EXPECT_EQ(steps.place(0, 1, {"train_loss"}).step, 0);
  EXPECT_EQ(steps.place(0, 2, {"val_accuracy"}).step, 1);
  EXPECT_EQ(steps.place(0, 2, {"train_loss"}).step, 1);  // epoch 2's step 0 has no train_loss yet
  EXPECT_EQ(steps.place(0, 2, {"train_loss"}).step, 2);  // now it has
}

TEST(StepPlacer, StepsThatGoBackwardOrRepeatAMetricAreKeptAfterTheLast) {
  StepPlacer steps;
  EXPECT_EQ(steps.place(5, std::nullopt, {"loss"}).step, 5);
  EXPECT_EQ(steps.place(9, std::nullopt, {"loss"}).step, 9);
  const StepPlacer::Placed back = steps.place(3, std::nullopt, {"loss"});
  EXPECT_EQ(back.step, 10);
  EXPECT_NE(back.note.find("step 3 after step 9 (steps went backward)"), std::string::npos)
      << back.note;
  // The trainer's later steps keep their distances, shifted as that line was.
  EXPECT_EQ(steps.place(4, std::nullopt, {"loss"}).step, 11);
  EXPECT_EQ(steps.place(6, std::nullopt, {"loss"}).step, 13);
  // Later shifts are not said again: once per run.
  EXPECT_EQ(steps.place(0, std::nullopt, {"loss"}).note, "");

  StepPlacer constant;  // a step that never moves
  EXPECT_EQ(constant.place(0, std::nullopt, {"val_accuracy", "loss"}).step, 0);
  const StepPlacer::Placed again = constant.place(0, std::nullopt, {"val_accuracy"});
  EXPECT_EQ(again.step, 1);
  EXPECT_NE(again.note.find("step 0 again for a metric it already gave"), std::string::npos)
      << again.note;
}

// Steps shifted again and again stop short of an overflow: the line is refused with a reason.
TEST(StepPlacer, ShiftedStepsNeverOverflow) {
  StepPlacer steps;
  const std::int64_t most = std::int64_t{1} << 53;
  std::string problem;
  for (int i = 0; i < 2000 && problem.empty(); ++i) {
    const StepPlacer::Placed p = steps.place(i % 2 ? 0 : most, std::nullopt, {"loss"});
    EXPECT_GE(p.step, 0);
    problem = p.problem;
  }
  EXPECT_NE(problem.find("no step is left"), std::string::npos) << problem;
}

// Issue 42's hostile pass, #75: steps moved by the placer were kept up to 2^62, past the 2^53
// that every stored step keeps. A line that would go past it is refused with the reason.
TEST(StepPlacer, NoStepIsKeptPast2To53) {
  StepPlacer steps;
  const std::int64_t most = std::int64_t{1} << 53;
  EXPECT_EQ(steps.place(10, std::nullopt, {"loss"}).step, 10);
  EXPECT_EQ(steps.place(0, std::nullopt, {"loss"}).step, 11);  // shifted by 11 from here on
  const StepPlacer::Placed past = steps.place(most - 5, std::nullopt, {"loss"});
  EXPECT_NE(past.problem.find("would be kept at step 9007199254740998, past 2^53"),
            std::string::npos)
      << past.problem;
  EXPECT_EQ(steps.place(most - 11, std::nullopt, {"loss"}).step, most);  // the last one there is
  EXPECT_NE(steps.place(0, std::nullopt, {"loss"})
                .problem.find("no step is left after " + std::to_string(most)),
            std::string::npos);
}

}  // namespace
}  // namespace sweep::scheduler
