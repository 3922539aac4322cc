// A tpe sweep killed with SIGKILL at a random moment, then `sweep resume`: every trial ends
// completed, no point is run twice, numbering has no gap, and the trials finished before the kill
// keep their values (the model reloads them instead of asking again). The sweep is a W&B file
// (method: bayes, run_cap, ${args_no_hyphens}) run by the real binary.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <thread>

#include "store/store.h"
#include "sweep_process_util.h"

namespace {

namespace fs = std::filesystem;
using sweep::testing::slurp;
using sweep::testing::spawn_sweep;
using sweep::testing::wait_exit;

std::vector<sweep::TrialRow> trials_of(const fs::path& db) {
  sweep::StoreOptions options;
  options.read_only = true;
  const sweep::Store store(db, options);
  const auto sweep = store.find_sweep("tpe-kill");
  return sweep ? store.trials(sweep->id) : std::vector<sweep::TrialRow>{};
}

TEST(TpeKillResume, SigkillThenResumeRunsEveryTrialOnceWithoutRepeatingAPoint) {
  const fs::path dir = fs::temp_directory_path() / ("sweep_tpe_kill_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "objective.py")
      << "import json, sys, time\n"
         "a = dict(w.split('=', 1) for w in sys.argv[1:])\n"
         "x, y = float(a['x']), a['y']\n"
         "time.sleep(0.15)\n"
         "print(json.dumps({'step': 1, 'epoch': 1,\n"
         "                  'loss': (x - 0.5) ** 2 + (0.0 if y == 'b' else 1.0)}))\n";
  std::ofstream(dir / "sweep.yaml") << "name: tpe-kill\n"
                                       "program: "
                                    << (dir / "objective.py").string()
                                    << "\n"
                                       "method: bayes\n"
                                       "metric: {name: loss, goal: minimize}\n"
                                       "run_cap: 16\n"
                                       "parameters:\n"
                                       "  x: {min: -2.0, max: 2.0}\n"
                                       "  y: {values: [a, b, c]}\n"
                                       "command:\n"
                                       "  - ${interpreter}\n"
                                       "  - ${program}\n"
                                       "  - ${args_no_hyphens}\n"
                                       "resources: {cpu_slots: 2}\n"
                                       "output: {dir: "
                                    << dir.string() << "}\n";
  const fs::path db = dir / "tpe-kill" / "sweep.db";

  const pid_t run = spawn_sweep({"run", (dir / "sweep.yaml").string()}, dir / "run.log");
  // Kill it once a few trials have finished, whatever it is doing then.
  std::map<std::int64_t, std::string> finished;
  for (int i = 0; i < 600 && finished.size() < 4; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (!fs::exists(db)) continue;
    try {
      finished.clear();
      for (const sweep::TrialRow& row : trials_of(db))
        if (row.state == sweep::TrialState::completed) finished[row.number] = row.params.dump();
    } catch (const std::exception&) {  // created but not yet a sweep database: poll again
    }
  }
  ::kill(run, SIGKILL);
  wait_exit(run);
  ASSERT_GE(finished.size(), 4u) << slurp(dir / "run.log");
  const std::size_t before = trials_of(db).size();
  ASSERT_LT(before, 16u) << "the sweep ended before the kill";

  const pid_t resume =
      spawn_sweep({"resume", "tpe-kill", "--out", dir.string()}, dir / "resume.log");
  ASSERT_EQ(wait_exit(resume), 0) << slurp(dir / "resume.log");
  const std::vector<sweep::TrialRow> after = trials_of(db);
  ASSERT_EQ(after.size(), 16u) << slurp(dir / "resume.log");
  std::set<std::string> points;
  for (std::size_t i = 0; i < after.size(); ++i) {
    EXPECT_EQ(after[i].number, static_cast<std::int64_t>(i));
    EXPECT_EQ(after[i].state, sweep::TrialState::completed) << "trial " << i;
    points.insert(after[i].params.dump());
    if (const auto it = finished.find(after[i].number); it != finished.end()) {
      EXPECT_EQ(after[i].params.dump(), it->second) << "a finished trial changed";
    }
  }
  EXPECT_EQ(points.size(), after.size()) << "a point ran twice";
  fs::remove_all(dir);
}

}  // namespace
