// The run glue without the CLI: device choice, TrainResult → TrialOutcome, and run_sweep over a
// tiny synthetic grid writing the store (trial states, metrics, report) and honouring
// metric.target.
#include "sweep/run/run_sweep.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/json.h"
#include "config_test_util.h"
#include "quiet_run.h"
#include "store/store.h"
#include "sweep/run/devices.h"
#include "sweep/run/trainer_trial.h"
#include "sweep_process_util.h"

namespace sweep::config::testing {
namespace {

namespace fs = std::filesystem;
using sweep::testing::fresh_dir;

TEST(Devices, AutoUsesEveryGpuElseCpuSlots) {
  ResourcesSpec r;
  r.cpu_slots = 3;
  r.cpu_threads = 1;
  run::DevicePlan cpu = run::plan_devices(r, 0, false);
  ASSERT_EQ(cpu.executor.devices.size(), 1u);
  EXPECT_EQ(cpu.executor.devices[0].kind, scheduler::DeviceKind::cpu);
  EXPECT_EQ(cpu.executor.cpu_slots, 3);
  EXPECT_EQ(cpu.description, "cpu x3 slots (1 thread each)");
  run::DevicePlan gpus = run::plan_devices(r, 2, true);
  ASSERT_EQ(gpus.executor.devices.size(), 2u);
  EXPECT_EQ(gpus.executor.devices[1], scheduler::Device::cuda(1));
  EXPECT_EQ(gpus.description, "cuda:0,cuda:1");
}

TEST(Devices, ChosenGpusMustExistAndGpuNeedsOne) {
  ResourcesSpec r;
  r.execution = "gpu";
  r.all_gpus = false;
  r.gpus = {0, 2};
  EXPECT_THROW(run::plan_devices(r, 2, true), Error);
  EXPECT_EQ(run::plan_devices(r, 3, true).description, "cuda:0,cuda:2");
  try {
    run::plan_devices(r, 0, false);
    ADD_FAILURE() << "execution: gpu without a GPU was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("built without the CUDA backend"), std::string::npos);
  }
  r.execution = "cpu";
  EXPECT_EQ(run::plan_devices(r, 4, true).executor.devices[0].kind, scheduler::DeviceKind::cpu);
}

// gpus_per_trial / execution: multi-gpu: resolved against the selected GPUs, and refused (a
// config error: exit 2) before anything runs when they cannot be met.
TEST(Devices, GpusPerTrialIsResolvedAndCheckedBeforeAnythingRuns) {
  ResourcesSpec r;
  r.gpus_per_trial = 2;
  const run::DevicePlan two = run::plan_devices(r, 4, true);
  EXPECT_EQ(two.gpus_per_trial, 2);
  EXPECT_EQ(two.description, "cuda:0,cuda:1,cuda:2,cuda:3, 2 GPUs per trial");
  r.gpus_per_trial_all = true;
  EXPECT_EQ(run::plan_devices(r, 3, true).gpus_per_trial, 3);
  r.gpus_per_trial_all = false;
  r.execution = "multi-gpu";
  EXPECT_EQ(run::plan_devices(r, 2, true).gpus_per_trial, 2);
  const auto message = [](const ResourcesSpec& spec, int gpus) {
    try {
      run::plan_devices(spec, gpus, true);
    } catch (const config::ConfigError& e) {
      return e.messages().at(0);
    }
    return std::string("accepted");
  };
  EXPECT_EQ(message(r, 0),
            "resources.execution: multi-gpu asks for GPUs, but no GPU is "
            "visible; use execution: cpu or auto");
  r.execution = "auto";
  r.gpus_per_trial = 4;
  EXPECT_EQ(message(r, 2),
            "resources.gpus_per_trial: 4 but only 2 GPUs are selected (gpus: all on this machine)");
  EXPECT_EQ(message(r, 0),
            "resources.gpus_per_trial: 4 trains each trial on several GPUs, but "
            "no GPU is visible; use gpus_per_trial: 1");
  r.execution = "cpu";
  EXPECT_NE(message(r, 8).find("but execution is cpu"), std::string::npos);
  r.execution = "gpu";
  r.all_gpus = false;
  r.gpus = {1, 3};
  r.gpus_per_trial = 3;
  EXPECT_EQ(message(r, 4),
            "resources.gpus_per_trial: 3 but only 2 GPUs are selected (gpus: a list of 2)");
}

TEST(Devices, ASweptGpuCountIsPerTrialAndChecked) {
  ResourcesSpec r;
  const run::DevicePlan four = run::plan_devices(r, 4, true);
  const std::string key = kGpusPerTrialKey;
  EXPECT_EQ(run::gpus_for_trial(four, sweep::Json::object()), 1);
  EXPECT_EQ(run::gpus_for_trial(four, sweep::Json{{key, 2}}), 2);
  EXPECT_EQ(run::gpus_for_trial(four, sweep::Json{{key, "all"}}), 4);
  EXPECT_THROW(run::gpus_for_trial(four, sweep::Json{{key, 5}}), config::ConfigError);
  const run::DevicePlan cpu = run::plan_devices(r, 0, false);
  EXPECT_EQ(run::gpus_for_trial(cpu, sweep::Json{{key, 1}}), 1);
  EXPECT_THROW(run::gpus_for_trial(cpu, sweep::Json{{key, 2}}), config::ConfigError);
}

TEST(TrainerTrial, ResultStatesMapOntoTrialStates) {
  trainer::TrainConfig config;
  config.training.early_stopping.patience = 3;
  trainer::TrainResult result;
  result.state = trainer::RunState::early_stopped;
  result.best_val_accuracy = 0.9;
  result.classes = 2;
  result.confusion = {5, 1, 2, 7};
  scheduler::TrialOutcome outcome = run::outcome_of(result, config);
  EXPECT_EQ(outcome.state, TrialState::stopped_early);
  EXPECT_EQ(outcome.message, "patience 3 on val_loss");
  EXPECT_EQ(outcome.summary["confusion"], sweep::Json::parse("[[5,1],[2,7]]"));
  EXPECT_EQ(outcome.summary["best_val_accuracy"], 0.9);
  result.state = trainer::RunState::diverged;
  result.message = "loss is NaN at iteration 12";
  EXPECT_EQ(run::outcome_of(result, config).state, TrialState::diverged);
  EXPECT_EQ(run::outcome_of(result, config).message, "loss is NaN at iteration 12");
  result.state = trainer::RunState::interrupted;
  EXPECT_EQ(run::outcome_of(result, config).state, TrialState::interrupted);
  result.state = trainer::RunState::completed;
  EXPECT_EQ(run::outcome_of(result, config).state, TrialState::completed);
}

const char* kTinyGrid =
    "name: tiny\n"
    "data: {dataset: synthetic, synthetic: {train_size: 128, test_size: 32, height: 8, width: 8}}\n"
    "model: {preset: mlp, hidden: [8]}\n"
    "training: {epochs: 1, batch_size: 16}\n"
    "sweep:\n  parameters:\n"
    "    training.learning_rate: {values: [0.01, 0.1]}\n"
    "    training.batch_size: {values: [16, 32]}\n"
    "resources: {cpu_slots: 2, cpu_threads: 1}\n";

TEST(RunSweep, TinyGridWritesTheStoreAndTheReport) {
  const fs::path dir = fresh_dir("sweep_run_glue");
  const SweepConfig config = load_text(kTinyGrid, {"output.dir=" + dir.string()});
  std::ostringstream out;
  run::RunOptions options = sweep::testing::quiet_run_options(out);
  const run::RunResult result = run::run_sweep(config, options);
  EXPECT_EQ(result.exit_code(), 0) << out.str();
  EXPECT_EQ(result.states.at(TrialState::completed), 4);
  EXPECT_EQ(result.db_path, dir / "tiny" / "sweep.db");
  EXPECT_TRUE(fs::exists(dir / "tiny" / "report.html"));
  EXPECT_TRUE(result.best.has_value());

  StoreOptions read_only;
  read_only.read_only = true;
  const Store store(result.db_path, read_only);
  const auto sweep = store.find_sweep("tiny");
  ASSERT_TRUE(sweep.has_value());
  EXPECT_EQ(sweep->state, SweepState::completed);
  const auto trials = store.trials(sweep->id);
  ASSERT_EQ(trials.size(), 4u);
  for (const TrialRow& t : trials) {
    EXPECT_EQ(t.state, TrialState::completed);
    EXPECT_EQ(t.attempts, 1);
    EXPECT_TRUE(t.device == "cpu:0" || t.device == "cpu:1") << t.device;  // cpu_slots: 2
    EXPECT_TRUE(t.summary.contains("confusion")) << t.summary.dump();
    // Stored relative to the sweep's directory, so a copied sweep finds its own files.
    EXPECT_EQ(t.log_path, "trials/00" + std::to_string(t.number) + "/log.txt");
    EXPECT_TRUE(fs::exists(result.run_dir / t.log_path)) << t.log_path;
    bool has_val_accuracy = false;
    for (const MetricPoint& p : store.trial_metrics(t.id))
      has_val_accuracy = has_val_accuracy || (p.name == "val_accuracy" && p.epoch == 1.0);
    EXPECT_TRUE(has_val_accuracy) << "trial " << t.number;
  }
  EXPECT_EQ(trials[3].params["training.learning_rate"], 0.1);
  EXPECT_NE(out.str().find("sweep tiny: 4 completed"), std::string::npos) << out.str();
  // A second run of the same name is refused; resume finds nothing left to do.
  EXPECT_THROW(run::run_sweep(config, options), Error);
  run::ResumeOptions resume;
  resume.out_dir = dir.string();
  resume.run = options;
  EXPECT_EQ(run::resume_sweep("tiny", resume).trials_run, 0);
  fs::remove_all(dir);
}

// training.precision bf16 on a machine without a GPU: the trial trains in fp32 and its log says so.
TEST(RunSweep, ReducedPrecisionOnTheCpuIsNotedInTheTrialLog) {
  const fs::path dir = fresh_dir("sweep_run_bf16_cpu");
  const SweepConfig config =
      load_text(kTinyGrid, {"output.dir=" + dir.string(), "name=tiny-bf16",
                            "training.precision=bf16", "resources.execution=cpu",
                            "sweep.parameters={training.learning_rate: {values: [0.1]}}"});
  std::ostringstream out;
  run::RunOptions options = sweep::testing::quiet_run_options(out);
  const run::RunResult result = run::run_sweep(config, options);
  ASSERT_EQ(result.exit_code(), 0) << out.str();
  const Store store(result.db_path, {.read_only = true});
  const auto trials = store.trials(store.find_sweep("tiny-bf16")->id);
  ASSERT_EQ(trials.size(), 1u);
  EXPECT_EQ(trials[0].state, TrialState::completed);
  std::ifstream log(result.run_dir / trials[0].log_path);
  const std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("training.precision bf16 applies on a GPU; the CPU backend computes in fp32"),
            std::string::npos)
      << text;
  fs::remove_all(dir);
}

TEST(RunSweep, ReachingTheTargetCancelsTheOtherTrials) {
  const fs::path dir = fresh_dir("sweep_run_target");
  const SweepConfig config =
      load_text(kTinyGrid, {"output.dir=" + dir.string(), "resources.cpu_slots=1",
                            "sweep.metric={name: val_accuracy, target: 0.0}"});
  std::ostringstream out;
  const run::RunOptions options = sweep::testing::quiet_run_options(out, false);
  const run::RunResult result = run::run_sweep(config, options);
  EXPECT_EQ(result.target_reached_by, "trial 0") << out.str();
  EXPECT_EQ(result.states.at(TrialState::completed), 1);
  EXPECT_EQ(result.states.at(TrialState::cancelled), 3);
  fs::remove_all(dir);
}

TEST(RunSweep, ExternalCommandTrialsReportTheirJsonLines) {
  const fs::path dir = fresh_dir("sweep_run_external");
  const SweepConfig config =
      load_config(std::string(SWEEP_SOURCE_DIR) + "/configs/external-command.yaml",
                  {"output.dir=" + dir.string(), "sweep.parameters.lr={values: [0.1]}"});
  std::ostringstream out;
  const run::RunOptions options = sweep::testing::quiet_run_options(out, false);
  const fs::path cwd = fs::current_path();
  fs::current_path(SWEEP_SOURCE_DIR);  // the command names configs/examples/... relative to it
  const run::RunResult result = run::run_sweep(config, options);
  fs::current_path(cwd);
  EXPECT_EQ(result.exit_code(), 0) << out.str();
  EXPECT_EQ(result.states.at(TrialState::completed), 2) << out.str();
  ASSERT_TRUE(result.best.has_value());
  EXPECT_GT(result.best->value, 0.5);
  EXPECT_TRUE(fs::exists(dir / "external-command" / "trials" / "000" / "log.txt"));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace sweep::config::testing
