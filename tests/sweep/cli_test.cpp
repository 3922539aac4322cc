// The `sweep` binary as a user runs it: help texts, exit codes (0 ok, 2 bad config or command
// line), validate's summary line, dry runs. The binary's path comes from CMake (SWEEP_BINARY).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace {

struct CliResult {
  int exit_code = -1;
  std::string out, err;
};

std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string quote(const std::string& arg) {
  std::string q = "'";
  for (char c : arg) {
    if (c == '\'') {
      q += "'\\''";
    } else {
      q.push_back(c);
    }
  }
  return q + "'";
}

CliResult run_cli(const std::vector<std::string>& args) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("sweep_cli_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::string command = "cd " + quote(SWEEP_SOURCE_DIR) + " && " + quote(SWEEP_BINARY);
  for (const std::string& arg : args) {
    command += ' ';
    command += quote(arg);
  }
  command += " >" + quote((dir / "out").string()) + " 2>" + quote((dir / "err").string());
  const int status = std::system(command.c_str());
  CliResult result;
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  result.out = slurp(dir / "out");
  result.err = slurp(dir / "err");
  std::filesystem::remove_all(dir);
  return result;
}

std::string write_temp(const std::string& name, const std::string& text) {
  const auto path = std::filesystem::temp_directory_path() / name;
  std::ofstream(path) << text;
  return path.string();
}

TEST(Cli, HelpOfEverySubcommandHasExamples) {
  const CliResult top = run_cli({"--help"});
  EXPECT_EQ(top.exit_code, 0);
  for (const char* word : {"validate", "run", "version", "Examples:"})
    EXPECT_NE(top.out.find(word), std::string::npos) << word << "\n" << top.out;
  for (const char* sub : {"validate", "run", "version"}) {
    const CliResult help = run_cli({sub, "--help"});
    EXPECT_EQ(help.exit_code, 0) << sub;
    EXPECT_NE(help.out.find("Example"), std::string::npos) << sub << "\n" << help.out;
  }
  EXPECT_NE(run_cli({"run", "--help"}).out.find("--dry-run"), std::string::npos);
}

TEST(Cli, ValidatePrintsTheTrialCountAndShape) {
  const CliResult r = run_cli({"validate", "configs/fashion-mnist-lenet.yaml"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "configs/fashion-mnist-lenet.yaml: ok, 12 trials (grid 4 × 3)\n");
}

TEST(Cli, ValidateReportsEveryProblemAndExitsTwo) {
  const std::string path =
      write_temp("sweep_cli_bad.yaml", "training:\n  learning_rate: -0.1\n  batch_sze: 4\n");
  const CliResult r = run_cli({"validate", path});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find(path + ":2:18: key 'training.learning_rate': must be > 0, got -0.1\n"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find(path + ":3:3: key 'training.batch_sze': unknown key, did you mean "
                              "'batch_size'?\n"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("2 problems"), std::string::npos) << r.err;
  std::filesystem::remove(path);
}

TEST(Cli, SetOverridesAreApplied) {
  const CliResult ok = run_cli({"validate", "configs/cifar-convnet.yaml", "--set",
                                "data.dataset=synthetic", "--set", "sweep.repeats=2"});
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_EQ(ok.out, "configs/cifar-convnet.yaml: ok, 8 trials (grid 2 × 2, 2 repeats each)\n");
  const CliResult bad =
      run_cli({"validate", "configs/quickstart.yaml", "--set", "training.epochs=0"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--set training.epochs=0: key 'training.epochs': must be >= 1, got 0"),
            std::string::npos)
      << bad.err;
}

TEST(Cli, DryRunPrintsOneLinePerTrialAndWritesNothing) {
  const auto out_dir = std::filesystem::temp_directory_path() / "sweep_cli_dry_run_out";
  std::filesystem::remove_all(out_dir);
  const CliResult r =
      run_cli({"run", "configs/quickstart.yaml", "--dry-run", "--out", out_dir.string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("sweep quickstart: 6 trials (grid 3 × 2), metric val_accuracy (maximize)"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("  trial 0: training.learning_rate=0.003 training.batch_size=32\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("  trial 5: training.learning_rate=0.03 training.batch_size=64\n"),
            std::string::npos)
      << r.out;
  EXPECT_FALSE(std::filesystem::exists(out_dir));
}

TEST(Cli, EveryShippedConfigDryRuns) {
  for (const char* name :
       {"quickstart", "fashion-mnist-lenet", "random-asha", "external-command"}) {
    const CliResult r = run_cli({"run", std::string("configs/") + name + ".yaml", "--dry-run"});
    EXPECT_EQ(r.exit_code, 0) << name << ": " << r.err;
    EXPECT_NE(r.out.find("dry run: nothing was trained or written"), std::string::npos) << name;
  }
  const CliResult cifar = run_cli(
      {"run", "configs/cifar-convnet.yaml", "--dry-run", "--set", "data.dataset=synthetic"});
  EXPECT_EQ(cifar.exit_code, 0) << cifar.err;
  EXPECT_NE(cifar.out.find("trial 3: training.learning_rate=0.05 model.net_width=32"),
            std::string::npos)
      << cifar.out;
}

TEST(Cli, UsageErrorsExitTwo) {
  EXPECT_EQ(run_cli({}).exit_code, 2);
  EXPECT_EQ(run_cli({"validate"}).exit_code, 2);
  EXPECT_EQ(run_cli({"frobnicate"}).exit_code, 2);
  const CliResult missing = run_cli({"validate", "no/such/file.yaml"});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("no/such/file.yaml: no such file"), std::string::npos);
}

// Bad input from the command line gets one clear line and exit 2: an empty --name is a bad name,
// not "no name given"; a directory or an empty file is not a config to run with defaults.
TEST(Cli, NonsenseInputsExitTwoWithOneLine) {
  const CliResult empty_name =
      run_cli({"run", "configs/quickstart.yaml", "--name", "", "--dry-run"});
  EXPECT_EQ(empty_name.exit_code, 2) << empty_name.out;
  EXPECT_NE(empty_name.err.find("--set name=: key 'name': the name is empty"), std::string::npos)
      << empty_name.err;
  const CliResult directory = run_cli({"run", "configs", "--dry-run"});
  EXPECT_EQ(directory.exit_code, 2) << directory.out;
  EXPECT_NE(directory.err.find("configs: is a directory, not a config file"), std::string::npos)
      << directory.err;
  const std::string blank = write_temp("sweep_cli_blank.yaml", "# nothing here\n");
  const CliResult comments = run_cli({"run", blank});
  EXPECT_EQ(comments.exit_code, 2);
  EXPECT_NE(comments.err.find(blank + ": the config is empty"), std::string::npos) << comments.err;
  std::filesystem::remove(blank);
}

// User text echoed back never carries raw control bytes to the terminal.
TEST(Cli, ControlBytesInUserTextAreShownEscaped) {
  const CliResult r =
      run_cli({"validate", "configs/quickstart.yaml", "--set", "name=bad\x1b[2J\x07name"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.find('\x1b'), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find('\x07'), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("bad\\x1b[2J\\x07name"), std::string::npos) << r.err;
}

// A grid far over the limit is counted, not built: validate says how big it is at once.
TEST(Cli, AHugeGridIsRefusedAtOnce) {
  std::string yaml = "sweep:\n  parameters:\n";
  for (int i = 0; i < 7; ++i)
    yaml += "    training.p" + std::to_string(i) + ": {values: [1,2,3,4,5,6,7,8,9,10]}\n";
  const std::string path = write_temp("sweep_cli_huge.yaml", yaml);
  const auto start = std::chrono::steady_clock::now();
  const CliResult r = run_cli({"run", path, "--dry-run"});
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("the sweep has 10000000 trials"), std::string::npos) << r.err;
  std::filesystem::remove(path);
}

// A trial on several GPUs where there is none (this machine, or --set execution=cpu) is a config
// error before anything runs: exit 2, one line, no sweep directory.
TEST(Cli, SeveralGpusPerTrialWithoutGpusExitTwoBeforeAnythingRuns) {
  const auto out =
      std::filesystem::temp_directory_path() / ("sweep_cli_gpus_" + std::to_string(::getpid()));
  const std::string base =
      "data: {dataset: synthetic, synthetic: {train_size: 64, test_size: 32}}\n"
      "model: {preset: mlp, hidden: [8]}\ntraining: {epochs: 1, batch_size: 16}\n";
  const std::string fixed =
      write_temp("sweep_cli_gpus.yaml", base + "resources: {execution: cpu, gpus_per_trial: 2}\n");
  CliResult r = run_cli({"run", fixed, "--out", out.string()});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("resources.gpus_per_trial: 2 trains each trial on several GPUs, but "
                       "execution is cpu"),
            std::string::npos)
      << r.err;
  const std::string swept = write_temp("sweep_cli_gpus_swept.yaml",
                                       base +
                                           "resources: {execution: cpu}\nsweep:\n  parameters:\n"
                                           "    resources.gpus_per_trial: {values: [1, 2]}\n");
  r = run_cli({"validate", swept});
  EXPECT_EQ(r.exit_code, 0) << r.err;  // the file is right; this machine cannot run it
  r = run_cli({"run", swept, "--out", out.string()});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("a trial asks for 2 GPUs, but the sweep runs on CPU slots"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(std::filesystem::exists(out)) << "nothing may be written";
  std::filesystem::remove(fixed);
  std::filesystem::remove(swept);
}

// A big grid within the limit dry-runs at once: its size, the first trials, how many more.
TEST(Cli, DryRunOfALargeGridListsTheFirstTrials) {
  std::string yaml =
      "name: big\ndata: {dataset: synthetic}\nmodel: {preset: mlp}\nsweep:\n  parameters:\n";
  yaml += "    training.learning_rate: {values: [";
  for (int i = 1; i <= 100; ++i)
    yaml += "0." + std::to_string(1000 + i).substr(1) + (i < 100 ? ", " : "");
  yaml += "]}\n    data.synthetic.seed: {values: [";
  for (int i = 1; i <= 500; ++i) yaml += std::to_string(i) + (i < 500 ? ", " : "");
  yaml += "]}\n";
  const std::string path = write_temp("sweep_cli_big.yaml", yaml);
  const CliResult r = run_cli({"run", path, "--dry-run"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("sweep big: 50000 trials (grid 100 × 500)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  trial 49: "), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("  trial 50: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  ... and 49950 more"), std::string::npos) << r.out;
  std::filesystem::remove(path);
}

TEST(Cli, VersionPrintsTheVersion) {
  const CliResult r = run_cli({"version"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out.rfind("sweep 0.", 0), 0u) << r.out;
}

}  // namespace
