// External command trials: argv building, JSON-lines metrics, exit codes, timeouts, stopping,
// CUDA_VISIBLE_DEVICES. The programs are small /bin/sh (and one python3) scripts written here.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "common/check.h"
#include "test_helpers.h"

namespace sweep::scheduler {
namespace {

using namespace std::chrono_literals;
using testing::Gate;
using testing::RecordingSink;
using testing::spec_with_id;
namespace fs = std::filesystem;

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
  ASSERT_EQ(metrics.size(), 4u);       // numeric keys only; step and epoch are coordinates
  EXPECT_EQ(metrics[0].name, "loss");  // keys come in JSON object order (sorted)
  EXPECT_EQ(metrics[0].epoch, 1);
  EXPECT_EQ(metrics[0].step, 1);  // no "step": the count of metric lines
  EXPECT_DOUBLE_EQ(metrics[1].value, 0.5);
  EXPECT_EQ(metrics[3].name, "val_accuracy");
  EXPECT_EQ(metrics[3].step, 20);
  EXPECT_DOUBLE_EQ(metrics[3].value, 0.7);
  EXPECT_EQ(outcome.summary.at("metrics").at("loss"), 0.5);
  EXPECT_EQ(outcome.summary.at("exit_code"), 0);
  const auto logs = sink_->logs(5);
  EXPECT_NE(std::find(logs.begin(), logs.end(), "args: --lr 0.003"), logs.end());
  EXPECT_NE(std::find(logs.begin(), logs.end(), "warming up"), logs.end());
  EXPECT_NE(std::find(logs.begin(), logs.end(), "plain text line"), logs.end());
  std::ifstream log_file(dir_ / "logs" / "trial-5.log");
  std::string text((std::istreambuf_iterator<char>(log_file)), std::istreambuf_iterator<char>());
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
