// The queue's own files under $SWEEP_HOME (a job's log, the workers' spawn lock) are never
// written through a symbolic link planted at their names: the job or the worker is refused with a
// message naming the link, and the link's target is left as it was.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "common/json.h"
#include "queue_test_util.h"

namespace sweep::queue::testing {
namespace {

namespace fs = std::filesystem;

std::string text_of(const fs::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(QueueOwnFiles, AJobLogThatIsASymbolicLinkFailsTheJobAndLeavesItsTargetAlone) {
  QueueDir dir;
  dir.write("tiny.yaml", tiny_config("tiny", 1, 1));
  const fs::path victim = dir.write("victim.txt", "not sweep's\n");
  const CommandResult submit = dir.sweep({"submit", "tiny.yaml", "--no-worker"});
  ASSERT_EQ(submit.exit_code, 0) << submit.err;
  const std::int64_t id = job_id_of(submit);
  const fs::path log =
      dir.queue_db().parent_path() / "logs" / ("queue-job-" + std::to_string(id) + ".log");
  fs::create_directories(log.parent_path());
  fs::create_symlink(victim, log);

  const CommandResult worker = dir.sweep({"worker", "--idle-exit", "1"});
  EXPECT_EQ(worker.exit_code, 0) << worker.out << worker.err;
  EXPECT_EQ(text_of(victim), "not sweep's\n") << "the job's log went through the link";
  EXPECT_TRUE(fs::is_symlink(fs::symlink_status(log)));

  const CommandResult fetch = dir.sweep({"fetch", std::to_string(id), "--json"});
  ASSERT_EQ(fetch.exit_code, 0) << fetch.err;
  const auto json = sweep::Json::parse(fetch.out);
  EXPECT_EQ(json["job"]["state"], "failed") << fetch.out;
  const std::string error = json["job"].value("error", "");
  EXPECT_NE(error.find(log.string() + " is a symbolic link: sweep writes its own files only as "
                                      "regular files; remove the link"),
            std::string::npos)
      << error;
}

TEST(QueueOwnFiles, ASpawnLockThatIsASymbolicLinkRefusesTheWorker) {
  QueueDir dir;
  dir.write("tiny.yaml", tiny_config("tiny", 1, 1));
  const fs::path victim = dir.write("victim.txt", "not sweep's\n");
  const fs::path spawn = dir.queue_db().parent_path() / "workers" / "queue.spawn";
  fs::create_directories(spawn.parent_path());
  fs::create_symlink(victim, spawn);

  const CommandResult worker = dir.sweep({"worker", "--idle-exit", "1"});
  EXPECT_NE(worker.exit_code, 0) << worker.out << worker.err;
  EXPECT_NE(worker.err.find(spawn.string() + " is a symbolic link"), std::string::npos)
      << worker.err;
  EXPECT_EQ(text_of(victim), "not sweep's\n");
}

}  // namespace
}  // namespace sweep::queue::testing
