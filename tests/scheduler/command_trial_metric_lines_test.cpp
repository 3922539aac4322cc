// External command trials' metric lines: NaN and infinite values (diverged), the sweep's metric
// missing or not a number, its place on its line, names and steps refused with a reason, lines
// too long, bytes that are not UTF-8.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "command_trial_fixture.h"
#include "common/check.h"
#include "scheduler/trial_environment.h"
#include "test_helpers.h"

namespace sweep::scheduler {
namespace {

namespace fs = std::filesystem;

// Python's json.dumps writes NaN and Infinity bare: such a line is read (its finite values too),
// and a NaN loss ends the trial `diverged`, stopping the program, as the built-in trainer does.
TEST_F(CommandTrialTest, ANanLossDivergesAndKeepsTheLinesOtherValues) {
  CommandSpec command;
  command.argv_template = script("nan.sh", R"(#!/bin/sh
echo '{"step": 1, "loss": 0.9, "acc": 0.5}'
echo '{"step": 2, "loss": NaN, "acc": 0.25, "grad_norm": Infinity}'
while true; do sleep 0.05; done
)");
  command.kill_grace_s = 1;
  command.metric_name = "acc";
  const auto started = std::chrono::steady_clock::now();
  const TrialOutcome outcome = run_one(command, spec_with_id(3));
  EXPECT_LT(std::chrono::steady_clock::now() - started, 10s);
  EXPECT_EQ(outcome.state, TrialState::diverged) << outcome.message;
  EXPECT_EQ(outcome.message, "loss became NaN at step 2");
  const auto metrics = sink_->metrics(3);
  ASSERT_EQ(metrics.size(), 5u);
  EXPECT_EQ(metrics[4].name, "acc");  // the sweep's metric after the rest of its line
  EXPECT_DOUBLE_EQ(metrics[4].value, 0.25);
  EXPECT_TRUE(std::isnan(metrics[2].value));
  EXPECT_TRUE(std::isinf(metrics[3].value));
}

// The sweep's own metric going infinite diverges too, even when it is not called a loss.
TEST_F(CommandTrialTest, TheSweepMetricGoingInfiniteDiverges) {
  CommandSpec command;
  command.argv_template = script("inf.sh",
                                 "#!/bin/sh\necho '{\"perplexity\": 12.5}'\necho '{\"perplexity\": "
                                 "Infinity}'\n");
  command.metric_name = "perplexity";
  const TrialOutcome outcome = run_one(command, spec_with_id(4));
  EXPECT_EQ(outcome.state, TrialState::diverged) << outcome.message;
  EXPECT_EQ(outcome.message, "perplexity became infinite at step 2");
}

// A program that exits 0 without ever reporting the sweep's metric has no result: failed, with
// what it did report (it counted as completed, and the sweep ended 0 with no best trial).
TEST_F(CommandTrialTest, ExitingWithoutTheSweepsMetricFails) {
  CommandSpec command;
  command.argv_template = script("other.sh", "#!/bin/sh\necho '{\"loss\": 0.5, \"score\": 0.7}'\n");
  command.metric_name = "val_accuracy";
  TrialOutcome outcome = run_one(command, spec_with_id(5));
  EXPECT_EQ(outcome.state, TrialState::failed);
  EXPECT_EQ(outcome.message, "exited 0 without reporting val_accuracy (it reported loss, score)");
  command.argv_template = script("silent.sh", "#!/bin/sh\nexit 0\n");
  outcome = run_one(command, spec_with_id(6));
  EXPECT_EQ(outcome.state, TrialState::failed);
  EXPECT_EQ(outcome.message, "exited 0 without reporting val_accuracy (no metric line at all)");
  command.argv_template = script("good.sh", "#!/bin/sh\necho '{\"val_accuracy\": 0.7}'\n");
  EXPECT_EQ(run_one(command, spec_with_id(7)).state, TrialState::completed);
}

// The sweep's metric written as no number is refused with the reason in the trial's log file (it
// was dropped without a word); other members that are no numbers (a tag, a phase) stay quiet.
TEST_F(CommandTrialTest, TheSweepsMetricAsNoNumberIsRefusedWithAReason) {
  CommandSpec command;
  command.argv_template = script("words.sh", R"(#!/bin/sh
echo '{"step": 1, "val_accuracy": "high"}'
echo '{"step": 2, "val_accuracy": null, "loss": 0.5}'
echo '{"step": 3, "val_accuracy": 0.7, "phase": "train"}'
)");
  command.metric_name = "val_accuracy";
  command.log_path = (dir_ / "words.log").string();
  EXPECT_EQ(run_one(command, spec_with_id(8)).state, TrialState::completed);
  const std::string log = read_file(dir_ / "words.log");
  EXPECT_NE(log.find("sweep: metric line refused (val_accuracy is not a number): "
                     "{\"step\": 1, \"val_accuracy\": \"high\"}"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("sweep: metric line refused (val_accuracy is not a number): "
                     "{\"step\": 2,"),
            std::string::npos)
      << log;
  EXPECT_EQ(log.find("phase"), log.rfind("phase")) << log;  // the line itself, no refusal
  const auto metrics = sink_->metrics(8);
  ASSERT_EQ(metrics.size(), 1u);  // the refused line's loss is not kept either
  EXPECT_EQ(metrics[0].name, "val_accuracy");
}

// Issue 42's hostile pass, #84: with the sweep's metric before train_loss on a line, the console's
// per-epoch line showed the previous line's train_loss. The sweep's metric is reported after the
// rest of its line, so every sink has the line's other values when it comes.
TEST_F(CommandTrialTest, TheSweepsMetricIsReportedAfterTheRestOfItsLine) {
  CommandSpec command;
  command.argv_template = script("order.sh", R"(#!/bin/sh
echo '{"epoch": 1, "step": 10, "val_accuracy": 0.1, "train_loss": 5.0, "lr": 0.01}'
)");
  command.metric_name = "val_accuracy";
  EXPECT_EQ(run_one(command, spec_with_id(9)).state, TrialState::completed);
  const auto metrics = sink_->metrics(9);
  ASSERT_EQ(metrics.size(), 3u);
  EXPECT_EQ(metrics[0].name, "train_loss");
  EXPECT_EQ(metrics[1].name, "lr");
  EXPECT_EQ(metrics[2].name, "val_accuracy");
}

// #71: a member name with a lone surrogate escape dropped its whole line in silence and the trial
// failed "no metric line at all". The line's other metrics are kept, and the log says what was
// left out.
TEST_F(CommandTrialTest, ALoneSurrogateNameIsLeftOutWithANoteAndTheLineKept) {
  CommandSpec command;
  command.argv_template = script("lone.sh", R"(#!/bin/sh
printf '%s\n' '{"step":1,"val_accuracy":0.5,"lone\ud800":1}'
)");
  command.metric_name = "val_accuracy";
  command.log_path = (dir_ / "lone.log").string();
  const TrialOutcome outcome = run_one(command, spec_with_id(10));
  EXPECT_EQ(outcome.state, TrialState::completed) << outcome.message;
  const auto metrics = sink_->metrics(10);
  ASSERT_EQ(metrics.size(), 1u);
  EXPECT_EQ(metrics[0].name, "val_accuracy");
  const std::string log = read_file(dir_ / "lone.log");
  EXPECT_NE(log.find("sweep: left out a metric name holds a \\u escape of half a surrogate pair"),
            std::string::npos)
      << log;
}

// A step that is not a whole number in [0, 2^53] is refused with its reason in the log, never
// truncated (1.5 -> 1) or overflowed (1e30 -> a negative step).
TEST_F(CommandTrialTest, BadStepsAreRefusedWithAReason) {
  CommandSpec command;
  command.argv_template = script("steps.sh", R"(#!/bin/sh
echo '{"step": 1.5, "loss": 0.9}'
echo '{"step": 1e30, "loss": 0.8}'
echo '{"step": 9223372036854775808, "loss": 0.7}'
echo '{"step": -3, "loss": 0.6}'
echo '{"step": 7, "loss": 0.5}'
)");
  command.log_path = (dir_ / "steps.log").string();
  const TrialOutcome outcome = run_one(command, spec_with_id(6));
  ASSERT_EQ(outcome.state, TrialState::completed) << outcome.message;
  const auto metrics = sink_->metrics(6);
  ASSERT_EQ(metrics.size(), 1u);
  EXPECT_EQ(metrics[0].step, 7);
  EXPECT_DOUBLE_EQ(metrics[0].value, 0.5);
  const auto logs = sink_->logs(6);
  ASSERT_GE(logs.size(), 4u);
  EXPECT_EQ(logs[0],
            "metric line refused (\"step\" must be a whole number from 0 to 2^53, got 1.5): "
            "{\"step\": 1.5, \"loss\": 0.9}");
  EXPECT_NE(logs[1].find("got 1e30"), std::string::npos) << logs[1];  // as written
  EXPECT_NE(logs[2].find("got 9223372036854775808"), std::string::npos) << logs[2];
  EXPECT_NE(logs[3].find("got -3"), std::string::npos) << logs[3];
  // The reasons are in the trial's log file too, each after its line (docs/running-trials.md says
  // so; the sinks do not write an external trial's log file).
  const std::string log = read_file(dir_ / "steps.log");
  EXPECT_NE(log.find("{\"step\": 1.5, \"loss\": 0.9}\nsweep: metric line refused (\"step\" must "
                     "be a whole number from 0 to 2^53, got 1.5): {\"step\": 1.5"),
            std::string::npos)
      << log;
}

// A trainer whose step is the batch index, starting again every epoch: each of its 12 lines keeps
// its value (only 4 steps were kept, epochs 1 and 2 overwritten by epoch 3), the log says once
// where the lines go, and a second run of the trial (a resume) has its printed steps again.
TEST_F(CommandTrialTest, AStepThatStartsAgainEveryEpochKeepsEveryValue) {
  CommandSpec command;
  command.argv_template = script("epochs.sh", R"(#!/bin/sh
for epoch in 1 2 3; do
  case $epoch in 1) acc=0.91;; 2) acc=0.85;; 3) acc=0.80;; esac
  for step in 0 1 2 3; do
    echo "{\"epoch\": $epoch, \"step\": $step, \"val_accuracy\": $acc}"
  done
done
)");
  command.metric_name = "val_accuracy";
  command.log_path = (dir_ / "epochs.log").string();
  ASSERT_EQ(run_one(command, spec_with_id(9)).state, TrialState::completed);
  const auto metrics = sink_->metrics(9);
  ASSERT_EQ(metrics.size(), 12u);
  for (std::size_t i = 0; i < metrics.size(); ++i) {
    EXPECT_EQ(metrics[i].step, static_cast<std::int64_t>(i));
    EXPECT_EQ(metrics[i].epoch, static_cast<std::int64_t>(i / 4 + 1));
    EXPECT_DOUBLE_EQ(metrics[i].value, i < 4 ? 0.91 : i < 8 ? 0.85 : 0.80);
  }
  const std::string log = read_file(dir_ / "epochs.log");
  const std::string note =
      "sweep: metric lines: step 0 again in epoch 2 (a step counted within each epoch); every "
      "value is kept";
  EXPECT_NE(log.find("{\"epoch\": 2, \"step\": 0, \"val_accuracy\": 0.85}\n" + note),
            std::string::npos)
      << log;
  EXPECT_EQ(log.find("sweep: metric lines"), log.rfind("sweep: metric lines")) << log;

  // The next run of the same trial starts from its printed steps: what it logs again replaces
  // what the first run logged there.
  ASSERT_EQ(run_one(command, spec_with_id(9)).state, TrialState::completed);
  const auto again = sink_->metrics(9);
  ASSERT_EQ(again.size(), 24u);
  EXPECT_EQ(again[12].step, 0);
  EXPECT_EQ(again[23].step, 11);
}

// A line over 1 MiB is never read as metrics in parts: one meant as a metric line is refused with
// the reason, once; the lines after it are read as always, and the log file keeps every byte.
TEST_F(CommandTrialTest, ALineTooLongIsRefusedOnceAndTheNextOnesAreRead) {
  CommandSpec command;
  command.argv_template = script("long.sh", R"(#!/bin/sh
printf '{"step": 1, "loss": 0.5, "pad": "'
head -c 3000000 /dev/zero | tr '\0' x
printf '"}\n'
echo '{"step": 2, "loss": 0.25}'
)");
  command.log_path = (dir_ / "log.txt").string();
  const TrialOutcome outcome = run_one(command, spec_with_id(7));
  ASSERT_EQ(outcome.state, TrialState::completed) << outcome.message;
  const auto metrics = sink_->metrics(7);
  ASSERT_EQ(metrics.size(), 1u);
  EXPECT_EQ(metrics[0].step, 2);
  const auto logs = sink_->logs(7);
  ASSERT_EQ(logs.size(), 1u);
  EXPECT_EQ(
      logs[0].rfind("metric line refused (longer than 1 MiB): {\"step\": 1, \"loss\": 0.5", 0), 0u)
      << logs[0].substr(0, 300);
  EXPECT_GT(fs::file_size(dir_ / "log.txt"), 3000000u);
  const std::string log = read_file(dir_ / "log.txt");
  EXPECT_NE(log.find("\nsweep: metric line refused (longer than 1 MiB): {\"step\": 1"),
            std::string::npos);
}

// A program's bytes that are not UTF-8 stay in its log file; the metric names, log lines and the
// stderr that explains its failure take U+FFFD for them. Before, a metric name with such a byte
// made the store's summary JSON throw: the trial's end went unrecorded and it stayed `running`.
TEST_F(CommandTrialTest, BytesThatAreNotUtf8StayInTheLogFileOnly) {
  CommandSpec command;
  command.argv_template = script("bytes.sh", R"(#!/bin/sh
printf '{"step": 1, "acc\377": 0.5}\n'
printf 'note \376\n'
printf 'fatal \377\n' >&2
exit 3
)");
  command.log_path = (dir_ / "log.txt").string();
  const TrialOutcome outcome = run_one(command, spec_with_id(8));
  ASSERT_EQ(outcome.state, TrialState::failed);
  const std::string replacement = "\xEF\xBF\xBD";
  EXPECT_NE(outcome.message.find("fatal " + replacement), std::string::npos) << outcome.message;
  const auto metrics = sink_->metrics(8);
  ASSERT_EQ(metrics.size(), 1u);
  EXPECT_EQ(metrics[0].name, "acc" + replacement);
  const auto logs = sink_->logs(8);
  EXPECT_NE(std::find(logs.begin(), logs.end(), "note " + replacement), logs.end());
  const std::string log = read_file(dir_ / "log.txt");
  EXPECT_NE(log.find("acc\xff"), std::string::npos);
  EXPECT_NE(log.find("note \xfe"), std::string::npos);
}

}  // namespace
}  // namespace sweep::scheduler
