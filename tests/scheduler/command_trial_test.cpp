// External command trials: argv building, JSON-lines metrics, exit codes, timeouts, stopping,
// CUDA_VISIBLE_DEVICES, the environment and directories, the process tree's end. The programs are
// small /bin/sh (and one python3) scripts written here.
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
  auto [future, got_metric] = submit_watched(executor, command, spec_with_id(1));
  ASSERT_TRUE(got_metric->wait());
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
  auto [future, got_metric] = submit_watched(executor, command, spec_with_id(8));
  ASSERT_TRUE(got_metric->wait());
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
