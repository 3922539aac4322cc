// The `sweep` binary as a user runs it: help texts, exit codes (0 ok, 2 bad config or command
// line), validate's summary line, dry runs. The binary's path comes from CMake (SWEEP_BINARY).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "common/json.h"
#include "store/store.h"

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

// A model whose layers cannot take the data's images is a config problem: validate says which
// layer and why, and run refuses before it makes anything.
TEST(Cli, ALayerThatCannotTakeItsInputIsRefusedBeforeAnythingRuns) {
  const std::string path =
      write_temp("sweep_cli_bad_shape.yaml",
                 "data: {dataset: synthetic, synthetic: {train_size: 64, test_size: 32}}\n"
                 "model:\n"
                 "  layers:\n"
                 "    - conv: {filters: 8, kernel: 3, stride: 2, padding: same}\n"
                 "training: {epochs: 1}\n");
  const CliResult r = run_cli({"validate", path});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(
      r.err.find(path + ":4:7: key 'model.layers.0': model layer 1 of 2 (conv): padding 'same' "
                        "needs stride 1 (got stride 2); give a number for padding instead (data: "
                        "1x28x28 synthetic images)\n"),
      std::string::npos)
      << r.err;
  const auto out_dir = std::filesystem::temp_directory_path() / "sweep_cli_bad_shape_out";
  std::filesystem::remove_all(out_dir);
  const CliResult run = run_cli({"run", path, "--out", out_dir.string()});
  EXPECT_EQ(run.exit_code, 2) << run.out << run.err;
  EXPECT_FALSE(std::filesystem::exists(out_dir));
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
  for (const char* name : {"quickstart", "fashion-mnist-lenet", "random-asha", "external-command",
                           "fashion-mnist-resnet", "fashion-mnist-resnet-sweep"}) {
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
  const CliResult resnet = run_cli({"run", "configs/fashion-mnist-resnet-sweep.yaml", "--dry-run"});
  EXPECT_NE(resnet.out.find("trial 5: model.depth=32 training.learning_rate=0.2"),
            std::string::npos)
      << resnet.out;
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
  EXPECT_NE(empty_name.err.find("--name '': key 'name': the name is empty"), std::string::npos)
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

// A finished sweep in a database of its own, as `sweep run` leaves it, for the read-only
// commands: trial 0 won with val_accuracy 0.87123456789 at epoch 2 (step 64), its learning rate a
// random draw (0.0031622776601683794); trial 1 has a NaN point and a mid-epoch loss.
std::filesystem::path write_inspect_db() {
  const auto dir =
      std::filesystem::temp_directory_path() / ("sweep_cli_inspect_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const auto db = dir / "sweep.db";
  sweep::Store store(db);
  sweep::SweepSpec spec;
  spec.name = "inspect";
  spec.metric_name = "val_accuracy";
  spec.devices = "cpu x2 slots";
  const std::int64_t sweep_id = store.create_sweep(spec);
  std::vector<sweep::TrialSpec> rows(2);
  rows[0].params = {{"training.learning_rate", 0.0031622776601683794}, {"training.batch_size", 64}};
  rows[1].number = 1;
  rows[1].params = {{"training.learning_rate", 0.045730505192732626}, {"training.batch_size", 64}};
  const std::vector<std::int64_t> ids = store.add_trials(sweep_id, rows);
  for (std::size_t i = 0; i < ids.size(); ++i) {
    store.claim_trial(ids[i], "cpu:" + std::to_string(i));
    store.set_trial_state(ids[i], sweep::TrialState::completed);
  }
  auto point = [](std::int64_t trial, const char* name, std::int64_t step,
                  std::optional<double> epoch, double value) {
    sweep::MetricPoint p;
    p.trial_id = trial;
    p.name = name;
    p.step = step;
    p.epoch = epoch;
    p.value = value;
    p.wall_time = 1.7e9;
    return p;
  };
  const std::vector<sweep::MetricPoint> points = {
      point(ids[0], "val_accuracy", 32, 1.0, 0.8),
      point(ids[0], "val_accuracy", 64, 2.0, 0.87123456789),
      point(ids[1], "loss", 10, 0.3125, 1.25), point(ids[1], "val_accuracy", 32, 1.0, 0.5),
      point(ids[1], "val_loss", 32, 1.0, std::nan(""))};
  store.log_metrics(points);
  return db;
}

TEST(Cli, ShowAndListPrintTablesWithHeadersAndShortNumbers) {
  const auto db = write_inspect_db();
  const CliResult show = run_cli({"show", "inspect", "--db", db.string()});
  EXPECT_EQ(show.exit_code, 0) << show.err;
  std::istringstream lines(show.out);
  std::string title, header, first;
  std::getline(lines, title);
  std::getline(lines, header);
  std::getline(lines, first);
  EXPECT_EQ(header.rfind("TRIAL  STATE      DEVICE  PARAMS", 0), 0u) << show.out;
  EXPECT_NE(header.find("BEST val_accuracy"), std::string::npos) << show.out;
  // The columns line up: the state starts where its header does.
  EXPECT_EQ(first.find("completed"), header.find("STATE")) << show.out;
  EXPECT_NE(first.find("learning_rate=0.00316 batch_size=64"), std::string::npos) << show.out;
  EXPECT_NE(first.find("0.8712"), std::string::npos) << show.out;
  EXPECT_EQ(show.out.find("0.0031622776601683794"), std::string::npos) << show.out;
  EXPECT_EQ(show.out.find("0.87123456789"), std::string::npos) << show.out;

  const CliResult list = run_cli({"list", "--db", db.string()});
  EXPECT_EQ(list.exit_code, 0) << list.err;
  EXPECT_EQ(list.out.rfind("NAME     STATE    TRIALS  BY STATE     DATABASE\n", 0), 0u) << list.out;
  EXPECT_NE(list.out.find("inspect  created  2       2 completed"), std::string::npos) << list.out;
  std::filesystem::remove_all(db.parent_path());
}

TEST(Cli, BestSpeaksInEpochsAsTheReportDoes) {
  const auto db = write_inspect_db();
  const CliResult best = run_cli({"best", "inspect", "--db", db.string()});
  EXPECT_EQ(best.exit_code, 0) << best.err;
  EXPECT_EQ(best.out.rfind("trial 0: val_accuracy 0.8712 at epoch 2 (step 64) (completed)\n", 0),
            0u)
      << best.out;
  std::filesystem::remove_all(db.parent_path());
}

TEST(Cli, ExportJsonCarriesEveryTrialsMetricHistory) {
  const auto db = write_inspect_db();
  const CliResult out = run_cli({"export", "inspect", "--db", db.string(), "--format", "json"});
  EXPECT_EQ(out.exit_code, 0) << out.err;
  const sweep::Json json = sweep::Json::parse(out.out);
  const sweep::Json& trials = json.at("trials");
  ASSERT_EQ(trials.size(), 2u);
  const sweep::Json& first = trials[0].at("history");
  ASSERT_EQ(first.size(), 2u) << first.dump();
  EXPECT_EQ(first[1],
            (sweep::Json{
                {"name", "val_accuracy"}, {"step", 64}, {"epoch", 2.0}, {"value", 0.87123456789}}));
  const sweep::Json& second = trials[1].at("history");
  ASSERT_EQ(second.size(), 3u) << second.dump();
  EXPECT_EQ(second[0].at("name"), "loss");
  EXPECT_EQ(second[0].at("epoch"), 0.3125);
  EXPECT_TRUE(second[2].at("value").is_null()) << "NaN is null, as in the rest of the export";
  std::filesystem::remove_all(db.parent_path());
}

// A sweep's directory stands for its name in every command that takes one (runs/NAME/ as a shell
// completes it); a directory renamed since keeps its sweep's name inside, and the refusal says it.
TEST(Cli, ASweepsDirectoryNamesTheSweep) {
  const auto db = write_inspect_db();
  const auto runs = db.parent_path() / "runs";
  std::filesystem::create_directories(runs / "inspect");
  std::filesystem::copy_file(db, runs / "inspect" / "sweep.db");
  const std::string dir = (runs / "inspect").string();
  for (const std::string& arg :
       {dir, dir + "/", (runs / "." / "inspect" / ".." / "inspect").string()}) {
    const CliResult show = run_cli({"show", arg});
    EXPECT_EQ(show.exit_code, 0) << arg << ": " << show.err;
    EXPECT_NE(show.out.find("sweep inspect (created)"), std::string::npos) << show.out;
  }
  const CliResult best = run_cli({"best", dir + "/"});
  EXPECT_EQ(best.exit_code, 0) << best.err;
  EXPECT_EQ(best.out.rfind("trial 0: val_accuracy 0.8712 at epoch 2", 0), 0u) << best.out;
  EXPECT_EQ(run_cli({"export", dir}).exit_code, 0);
  const CliResult report = run_cli({"report", dir + "/"});
  EXPECT_EQ(report.exit_code, 0) << report.err;
  EXPECT_TRUE(std::filesystem::exists(runs / "inspect" / "report.html"));

  std::filesystem::rename(runs / "inspect", runs / "renamed");
  const CliResult renamed = run_cli({"show", (runs / "renamed").string()});
  EXPECT_EQ(renamed.exit_code, 1);
  EXPECT_NE(renamed.err.find("no sweep named 'renamed' in " +
                             (runs / "renamed" / "sweep.db").string() + " (it holds 'inspect')"),
            std::string::npos)
      << renamed.err;
  const CliResult missing = run_cli({"show", (runs / "nothing").string()});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("no sweep database at " + (runs / "nothing" / "sweep.db").string()),
            std::string::npos)
      << missing.err;
  std::filesystem::remove_all(db.parent_path());
}

// A shell command's exit status and what it wrote to stderr (redirected here).
CliResult run_shell(const std::string& command, const std::filesystem::path& err) {
  const int status = std::system(("(" + command + ") 2>" + quote(err.string())).c_str());
  CliResult result;
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  result.err = slurp(err);
  return result;
}

// An export is all of it or none: a write cut short (here by a file-size limit, as by a full disk)
// leaves the file it replaces as it was and no temporary file beside it; a directory is refused;
// standard output that cannot take it all fails the command instead of ending 0.
TEST(Cli, AnExportIsWrittenWholeOrNotAtAll) {
  const auto db = write_inspect_db();
  const auto dir = db.parent_path();
  {
    sweep::Store store(db);
    std::vector<sweep::MetricPoint> points;
    for (int step = 1; step <= 200; ++step) {  // an export of some 15 KB
      sweep::MetricPoint p;
      p.trial_id = store.trials(store.find_sweep("inspect")->id).front().id;
      p.name = "loss";
      p.step = step;
      p.value = 1.0 / step;
      p.wall_time = 1.7e9;
      points.push_back(p);
    }
    store.log_metrics(points);
  }
  const auto kept = dir / "results.json";
  std::ofstream(kept) << "old\n";
  const std::string exporter =
      quote(SWEEP_BINARY) + " export inspect --db " + quote(db.string()) + " --format json";
  const CliResult limited =
      run_shell("ulimit -f 4 && " + exporter + " -o " + quote(kept.string()), dir / "err");
  EXPECT_EQ(limited.exit_code, 1);
  EXPECT_NE(limited.err.find("cannot write " + kept.string() + ": File too large"),
            std::string::npos)
      << limited.err;
  EXPECT_EQ(slurp(kept), "old\n");
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    EXPECT_EQ(entry.path().filename().string().find(".tmp."), std::string::npos) << entry.path();
  ASSERT_EQ(run_shell(exporter + " -o " + quote(kept.string()), dir / "err").exit_code, 0);
  EXPECT_GT(std::filesystem::file_size(kept), 8192u);  // larger than the limit above

  const CliResult directory = run_shell(exporter + " -o " + quote(dir.string()), dir / "err");
  EXPECT_EQ(directory.exit_code, 1);
  EXPECT_NE(directory.err.find("it is a directory"), std::string::npos) << directory.err;
  if (std::filesystem::exists("/dev/full")) {
    const CliResult full = run_shell(exporter + " >/dev/full", dir / "err");
    EXPECT_EQ(full.exit_code, 1);
    EXPECT_NE(full.err.find("could not write all of the output to standard output"),
              std::string::npos)
        << full.err;
  }
  std::filesystem::remove_all(dir);
}

TEST(Cli, VersionPrintsTheVersion) {
  const CliResult r = run_cli({"version"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out.rfind("sweep 0.", 0), 0u) << r.out;
}

TEST(Cli, VersionFlagPrintsWhatVersionPrints) {
  const CliResult flag = run_cli({"--version"});
  EXPECT_EQ(flag.exit_code, 0) << flag.err;
  EXPECT_EQ(flag.out, run_cli({"version"}).out);
  EXPECT_NE(flag.out.find("MPI: "), std::string::npos) << flag.out;
}

}  // namespace
