// The README's default sweep, run for real as shipped (configs/quickstart.yaml on the installed
// Fashion-MNIST): every trial completes, the best one learned, the database and the report exist.
// Skips, saying why, when the Debian package dataset-fashion-mnist is not installed.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "store/store.h"

namespace {

namespace fs = std::filesystem;

TEST(Quickstart, RunsAsShippedLearnsAndWritesReport) {
  if (!fs::exists("/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz"))
    GTEST_SKIP() << "dataset-fashion-mnist is not installed: the quickstart needs it";
  const fs::path out =
      fs::temp_directory_path() / ("sweep_quickstart_" + std::to_string(::getpid()));
  fs::remove_all(out);
  const std::string command = std::string("cd '") + SWEEP_SOURCE_DIR + "' && '" + SWEEP_BINARY +
                              "' run configs/quickstart.yaml --out '" + out.string() + "' > '" +
                              (out.string() + ".log") + "' 2>&1";
  const int status = std::system(command.c_str());
  std::ifstream log_file(out.string() + ".log");
  std::stringstream log;
  log << log_file.rdbuf();
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << log.str();
  EXPECT_NE(log.str().find("sweep quickstart: 6 completed"), std::string::npos) << log.str();

  const fs::path db = out / "quickstart" / "sweep.db";
  ASSERT_TRUE(fs::exists(db));
  EXPECT_GT(fs::file_size(out / "quickstart" / "report.html"), 100000u);
  sweep::Store store(db.string(), {.read_only = true});
  const auto sweep_row = store.find_sweep(std::string_view("quickstart"));
  ASSERT_TRUE(sweep_row.has_value());
  const auto best = store.best_trial(sweep_row->id);
  ASSERT_TRUE(best.has_value());
  EXPECT_GT(best->value, 0.80) << "the best quickstart trial should reach well above chance";

  // `sweep report` rebuilds the same report from the database alone.
  const fs::path rebuilt = out / "rebuilt.html";
  const std::string report = std::string("'") + SWEEP_BINARY + "' report quickstart --out '" +
                             out.string() + "' -o '" + rebuilt.string() + "' > /dev/null";
  EXPECT_EQ(std::system(report.c_str()), 0);
  EXPECT_GT(fs::file_size(rebuilt), 100000u);
  fs::remove_all(out);
  fs::remove(out.string() + ".log");
}

}  // namespace
