// An external command trial's log file is one of sweep's own (common/own_file.h): a symbolic link
// planted at its name fails the trial with a message naming it, and the program's output never
// reaches the link's target.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "scheduler/trial_environment.h"
#include "test_helpers.h"

namespace sweep::scheduler {
namespace {

namespace fs = std::filesystem;

TEST(CommandTrialLog, ALogThatIsASymbolicLinkFailsTheTrialAndLeavesItsTargetAlone) {
  std::string pattern = (fs::temp_directory_path() / "sweep-cmdlog-XXXXXX").string();
  ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
  const fs::path dir = pattern;
  const fs::path victim = dir / "victim.txt";
  std::ofstream(victim) << "not sweep's\n";
  const fs::path log = dir / "log.txt";
  fs::create_symlink(victim, log);

  CommandSpec command;
  command.argv_template = "/bin/echo output";
  command.log_path = log.string();
  ExecutorOptions options;
  options.devices = {Device::cpu()};
  auto sink = std::make_shared<testing::RecordingSink>();
  TrialOutcome outcome;
  {
    Executor executor(options, {sink});
    outcome = executor.submit(testing::spec_with_id(1), make_command_trial(command)).outcome();
  }
  EXPECT_EQ(outcome.state, TrialState::failed);
  EXPECT_NE(outcome.message.find(log.string() + " is a symbolic link: sweep writes its own files "
                                                "only as regular files; remove the link"),
            std::string::npos)
      << outcome.message;
  std::ifstream in(victim);
  std::ostringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), "not sweep's\n");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace sweep::scheduler
