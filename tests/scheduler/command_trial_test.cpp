// External command trials: argv building, JSON-lines metrics, exit codes, timeouts, stopping,
// CUDA_VISIBLE_DEVICES. The programs are small /bin/sh (and one python3) scripts written here.
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

#include "common/check.h"
#include "scheduler/trial_environment.h"
#include "test_helpers.h"

namespace sweep::scheduler {
namespace {

using namespace std::chrono_literals;
using testing::Gate;
using testing::RecordingSink;
using testing::spec_with_id;
namespace fs = std::filesystem;

// A file's bytes (a trial's log file).
std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

class CommandTrialTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "sweep-cmd-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Writes an executable script and returns its path.
  std::string script(const std::string& name, const std::string& body) {
    const fs::path path = dir_ / name;
    std::ofstream(path) << body;
    fs::permissions(path, fs::perms::owner_all);
    return path.string();
  }

  TrialOutcome run_one(const CommandSpec& command, TrialSpec spec = spec_with_id(1),
                       Device device = Device::cpu()) {
    ExecutorOptions options;
    options.devices = {device};
    Executor executor(options, {sink_});
    return executor.submit(std::move(spec), make_command_trial(command)).outcome();
  }

  fs::path dir_;
  std::shared_ptr<RecordingSink> sink_ = std::make_shared<RecordingSink>();
};

TEST(CommandTemplate, SplitsLikeAShellWithoutOne) {
  EXPECT_EQ(split_command_template("python3 train.py --lr {lr}"),
            (std::vector<std::string>{"python3", "train.py", "--lr", "{lr}"}));
  EXPECT_EQ(split_command_template("a 'b c' \"d \\\"e\\\"\" f\\ g  "),
            (std::vector<std::string>{"a", "b c", "d \"e\"", "f g"}));
  EXPECT_THROW(split_command_template("a 'b"), Error);
  EXPECT_THROW(split_command_template("   "), Error);
}

TEST(CommandTemplate, SubstitutesParamsInsideOneArgumentEach) {
  TrialSpec spec = spec_with_id(12, {{"lr", 0.01},
                                     {"bs", 64},
                                     {"name", "x; rm -rf / $(boom)"},
                                     {"training", {{"momentum", 0.9}}},
                                     {"flat.key", "flat"}});
  CommandSpec command;
  command.argv_template =
      "run --lr={lr} --bs {bs} --name {name} -m {training.momentum} {flat.key} "
      "{trial_id} {device} {trial_dir} '{{literal}}'";
  command.trial_dir = "/runs/t{trial_id}";
  EXPECT_EQ(
      expand_command(command, spec, Device::cuda(1)),
      (std::vector<std::string>{"run", "--lr=0.01", "--bs", "64", "--name", "x; rm -rf / $(boom)",
                                "-m", "0.9", "flat", "12", "cuda:1", "/runs/t12", "{literal}"}));
  command.argv_template = "run {missing}";
  try {
    expand_command(command, spec, Device::cpu());
    FAIL() << "no error for an unknown placeholder";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("placeholder {missing} names no parameter of trial 12"),
              std::string::npos)
        << e.what();
  }
}

TEST_F(CommandTrialTest, ParsesJsonLinesMetricsAndKeepsTheLog) {
  CommandSpec command;
  command.argv_template = script("train.sh", R"(#!/bin/sh
echo "args: $1 $2"
echo '{"epoch": 1, "val_accuracy": 0.5, "loss": 0.9}'
echo "warming up" >&2
echo 'plain text line'
echo '{"epoch": 2, "step": 20, "val_accuracy": 0.7, "loss": 0.5, "tag": "x", "ok": true}'
)") + " --lr {lr}";
  command.log_path = (dir_ / "logs" / "trial-{trial_id}.log").string();
  const TrialOutcome outcome = run_one(command, spec_with_id(5, {{"lr", 0.003}}));
  ASSERT_EQ(outcome.state, TrialState::completed) << outcome.message;
  const auto metrics = sink_->metrics(5);
  ASSERT_EQ(metrics.size(), 4u);               // numeric keys only; step and epoch are coordinates
  EXPECT_EQ(metrics[0].name, "val_accuracy");  // in the line's order
  EXPECT_EQ(metrics[0].epoch, 1);
  EXPECT_EQ(metrics[0].step, 1);  // no "step": the count of metric lines
  EXPECT_DOUBLE_EQ(metrics[0].value, 0.5);
  EXPECT_EQ(metrics[1].name, "loss");
  EXPECT_EQ(metrics[2].name, "val_accuracy");
  EXPECT_EQ(metrics[2].step, 20);
  EXPECT_DOUBLE_EQ(metrics[2].value, 0.7);
  EXPECT_EQ(outcome.summary.at("metrics").at("loss"), 0.5);
  EXPECT_EQ(outcome.summary.at("exit_code"), 0);
  const auto logs = sink_->logs(5);
  EXPECT_NE(std::find(logs.begin(), logs.end(), "args: --lr 0.003"), logs.end());
  EXPECT_NE(std::find(logs.begin(), logs.end(), "warming up"), logs.end());
  EXPECT_NE(std::find(logs.begin(), logs.end(), "plain text line"), logs.end());
  const std::string text = read_file(dir_ / "logs" / "trial-5.log");
  EXPECT_NE(text.find("\"val_accuracy\": 0.5"), std::string::npos) << text;
  EXPECT_NE(text.find("warming up"), std::string::npos) << text;
}

TEST_F(CommandTrialTest, ShellMetacharactersInParamsStayOneArgument) {
  const std::string marker = (dir_ / "pwned").string();
  CommandSpec command;
  command.argv_template = script("args.sh", "#!/bin/sh\nprintf '[%s]\\n' \"$@\"\n") + " {name}";
  const TrialOutcome outcome = run_one(
      command, spec_with_id(1, {{"name", "a b; touch " + marker + "; $(touch " + marker + ")"}}));
  ASSERT_EQ(outcome.state, TrialState::completed) << outcome.message;
  EXPECT_EQ(sink_->logs(1),
            (std::vector<std::string>{"[a b; touch " + marker + "; $(touch " + marker + ")]"}));
  EXPECT_FALSE(fs::exists(marker));
}

TEST_F(CommandTrialTest, NonZeroExitFailsWithCodeAndStderrTail) {
  CommandSpec command;
  command.argv_template =
      script("fail.sh", "#!/bin/sh\necho 'first' >&2\necho 'bad thing' >&2\nexit 3\n");
  command.stderr_tail_lines = 1;
  const TrialOutcome outcome = run_one(command);
  EXPECT_EQ(outcome.state, TrialState::failed);
  EXPECT_EQ(outcome.message, "exited with code 3; last stderr: | bad thing");
  EXPECT_EQ(outcome.summary.at("exit_code"), 3);
}

TEST_F(CommandTrialTest, KilledBySignalIsReported) {
  CommandSpec command;
  command.argv_template = script("die.sh", "#!/bin/sh\nkill -9 $$\n");
  const TrialOutcome outcome = run_one(command);
  EXPECT_EQ(outcome.state, TrialState::failed);
  EXPECT_EQ(outcome.message.rfind("killed by signal 9", 0), 0u) << outcome.message;
}

TEST_F(CommandTrialTest, MissingProgramFailsClearly) {
  CommandSpec command;
  command.argv_template = "sweep-no-such-program-xyz --flag";
  const TrialOutcome outcome = run_one(command);
  EXPECT_EQ(outcome.state, TrialState::failed);
  EXPECT_NE(outcome.message.find("cannot start 'sweep-no-such-program-xyz'"), std::string::npos)
      << outcome.message;
}

TEST_F(CommandTrialTest, NoMetricForTooLongFailsInsteadOfHanging) {
  CommandSpec command;
  command.argv_template = script("silent.sh", "#!/bin/sh\necho '{\"loss\": 1}'\nexec sleep 30\n");
  command.metric_timeout_s = 0.3;
  const auto started = std::chrono::steady_clock::now();
  const TrialOutcome outcome = run_one(command);
  EXPECT_LT(std::chrono::steady_clock::now() - started, 10s);
  EXPECT_EQ(outcome.state, TrialState::failed);
  EXPECT_EQ(outcome.message, "no metric reported in 0.3 s");
}

TEST_F(CommandTrialTest, StopSendsSigtermThenSigkillAndLeavesNoProcess) {
  const std::string pid_file = (dir_ / "pid").string();
  CommandSpec command;
  // Ignores SIGTERM, so only the SIGKILL after the grace period ends it.
  command.argv_template =
      script("stubborn.sh", "#!/bin/sh\ntrap '' TERM\necho $$ > " + pid_file +
                                "\necho '{\"loss\": 1}'\nwhile true; do sleep 0.05; done\n");
  command.kill_grace_s = 0.3;
  ExecutorOptions options;
  Executor executor(options, {sink_});
  Gate got_metric;
  TrialCallbacks callbacks;
  callbacks.on_metric = [&](const MetricPoint&) { got_metric.open(); };
  auto future = executor.submit(spec_with_id(1), make_command_trial(command), callbacks);
  ASSERT_TRUE(got_metric.wait());
  const auto started = std::chrono::steady_clock::now();
  future.cancel();
  const TrialOutcome outcome = future.outcome();
  EXPECT_LT(std::chrono::steady_clock::now() - started, 10s);
  EXPECT_EQ(outcome.state, TrialState::cancelled);
  std::ifstream pid_in(pid_file);
  pid_t pid = 0;
  pid_in >> pid;
  ASSERT_GT(pid, 0);
  EXPECT_EQ(::kill(pid, 0), -1);  // reaped: no such process
  EXPECT_EQ(errno, ESRCH);
}

TEST_F(CommandTrialTest, EarlyStopKillsAPoliteProgramQuickly) {
  CommandSpec command;
  command.argv_template = script(
      "epochs.sh",
      "#!/bin/sh\nfor e in 1 2 3 4 5 6 7 8 9; do echo \"{\\\"epoch\\\": $e, \\\"acc\\\": 0.1}\"; "
      "sleep 0.2; done\n");
  class StopAtTwo : public StoppingPolicy {
    StopDecision observe(std::int64_t, const MetricPoint& point) override {
      return point.epoch >= 2 ? StopDecision::stop_because("enough") : StopDecision::keep_going();
    }
    std::string describe() const override { return "stop-at-two"; }
  };
  Executor executor(ExecutorOptions{}, {sink_}, std::make_shared<StopAtTwo>());
  const TrialOutcome outcome =
      executor.submit(spec_with_id(1), make_command_trial(command)).outcome();
  EXPECT_EQ(outcome.state, TrialState::stopped_early);
  EXPECT_EQ(outcome.message, "enough");
  EXPECT_EQ(sink_->metrics(1).size(), 2u);
}

TEST_F(CommandTrialTest, CudaVisibleDevicesNamesTheSlotsGpuOrNone) {
  CommandSpec command;
  command.argv_template = script(
      "env.sh",
      "#!/bin/sh\necho \"cvd=[${CUDA_VISIBLE_DEVICES-unset}] id=$SWEEP_TRIAL_ID x=$EXTRA\"\n");
  command.env = {{"EXTRA", "lr{lr}"}};
  EXPECT_EQ(run_one(command, spec_with_id(4, {{"lr", 0.1}}), Device::cuda(1)).state,
            TrialState::completed);
  EXPECT_EQ(sink_->logs(4), (std::vector<std::string>{"cvd=[1] id=4 x=lr0.1"}));
  EXPECT_EQ(run_one(command, spec_with_id(5, {{"lr", 0.2}}), Device::cpu()).state,
            TrialState::completed);
  EXPECT_EQ(sink_->logs(5), (std::vector<std::string>{"cvd=[] id=5 x=lr0.2"}));
}

// The trial's facts reach the program under the names of trial_environment.h, and an env value
// escaped with escape_placeholders arrives as written (JSON keeps its braces).
TEST_F(CommandTrialTest, EnvironmentNamesTheTrial) {
  CommandSpec command;
  command.argv_template =
      script("env.sh", std::string("#!/bin/sh\necho \"id=$") + kTrialIdVariable + " number=$" +
                           kTrialNumberVariable + " name=$" + kTrialNameVariable + " dir=$" +
                           kTrialDirVariable + " device=$" + kDeviceVariable + " params=$" +
                           kParamsVariable + "\"\n");
  command.trial_dir = (dir_ / "t{trial_id}").string();
  const std::string params = R"({"lr": 0.1, "a": {"b": "{x}"}})";
  command.env = {{kParamsVariable, escape_placeholders(params)}};
  EXPECT_EQ(escape_placeholders("{a}}"), "{{a}}}}");
  TrialSpec spec = spec_with_id(6, {{"lr", 0.1}});
  spec.number = 2;
  spec.name = "lr=0.1";
  ASSERT_EQ(run_one(command, spec, Device::cuda(3)).state, TrialState::completed);
  EXPECT_EQ(sink_->logs(6),
            (std::vector<std::string>{"id=6 number=2 name=lr=0.1 dir=" + (dir_ / "t6").string() +
                                      " device=cuda:3 params=" + params}));
}

TEST_F(CommandTrialTest, WorkingDirAndTrialDir) {
  CommandSpec command;
  command.argv_template = "./here.sh {trial_dir}";
  script("here.sh", "#!/bin/sh\necho \"dir=$1 exists=$(test -d $1 && echo yes)\"\n");
  command.working_dir = dir_.string();
  command.trial_dir = (dir_ / "t{trial_id}").string();
  ASSERT_EQ(run_one(command, spec_with_id(3)).state, TrialState::completed);
  EXPECT_EQ(sink_->logs(3),
            (std::vector<std::string>{"dir=" + (dir_ / "t3").string() + " exists=yes"}));
}

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
  // The reasons are in the trial's log file too, each after its line (the README says so; the
  // sinks do not write an external trial's log file).
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

// A live process (not a zombie waiting for init to reap it).
bool alive(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const auto close = text.rfind(')');
  return close != std::string::npos && close + 2 < text.size() && text[close + 2] != 'Z';
}

bool all_gone(const std::vector<pid_t>& pids, std::chrono::seconds within) {
  const auto deadline = std::chrono::steady_clock::now() + within;
  for (;;) {
    bool any = false;
    for (pid_t pid : pids) any = any || alive(pid);
    if (!any) return true;
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(20ms);
  }
}

std::vector<pid_t> pids_in(const fs::path& file) {
  std::vector<pid_t> pids;
  std::ifstream in(file);
  for (pid_t pid; in >> pid;) pids.push_back(pid);
  return pids;
}

// Children that leave the trial's process group (setsid) or its tree (a double fork: the
// daemon's parent exits and init adopts it) end with the trial, whether the program exits by
// itself or is stopped.
TEST_F(CommandTrialTest, ChildrenThatLeaveTheGroupOrTheTreeEndWithTheTrial) {
  const fs::path pids = dir_ / "pids";
  const std::string body =
      "#!/bin/sh\n"
      "setsid sleep 300 &\n"
      "echo $! >> " +
      pids.string() +
      "\n"
      "( setsid sh -c 'sleep 301 & echo $! >> " +
      pids.string() +
      "' & ) \n"
      "sleep 0.2\n"
      "echo '{\"loss\": 1}'\n";
  CommandSpec command;
  command.kill_grace_s = 0.5;
  command.argv_template = script("daemons.sh", body + "exit 0\n");
  const TrialOutcome done = run_one(command, spec_with_id(7));
  EXPECT_EQ(done.state, TrialState::completed) << done.message;
  std::vector<pid_t> left = pids_in(pids);
  ASSERT_EQ(left.size(), 2u);
  EXPECT_TRUE(all_gone(left, 10s)) << "a setsid or double-forked child outlived its trial";

  // The same while the program still runs and the trial is stopped.
  fs::remove(pids);
  command.argv_template = script("daemons_stop.sh", body + "while true; do sleep 0.05; done\n");
  ExecutorOptions options;
  Executor executor(options, {sink_});
  Gate got_metric;
  TrialCallbacks callbacks;
  callbacks.on_metric = [&](const MetricPoint&) { got_metric.open(); };
  auto future = executor.submit(spec_with_id(8), make_command_trial(command), callbacks);
  ASSERT_TRUE(got_metric.wait());
  future.cancel();
  EXPECT_EQ(future.outcome().state, TrialState::cancelled);
  left = pids_in(pids);
  ASSERT_EQ(left.size(), 2u);
  EXPECT_TRUE(all_gone(left, 10s)) << "a setsid or double-forked child outlived its trial";
}

TEST_F(CommandTrialTest, PythonProgramReportsMetrics) {
  CommandSpec command;
  command.argv_template = "python3 " + script("train.py", R"(import json, sys
lr = float(sys.argv[1])
for epoch in range(1, 4):
    print(json.dumps({"epoch": epoch, "val_accuracy": 1 - lr / epoch}), flush=True)
)") + " {lr}";
  const TrialOutcome outcome = run_one(command, spec_with_id(8, {{"lr", 0.5}}));
  ASSERT_EQ(outcome.state, TrialState::completed) << outcome.message;
  const auto metrics = sink_->metrics(8);
  ASSERT_EQ(metrics.size(), 3u);
  EXPECT_DOUBLE_EQ(metrics[1].value, 0.75);
  EXPECT_EQ(metrics[2].epoch, 3);
}

}  // namespace
}  // namespace sweep::scheduler
