// A sweep built without MPI that mpirun / srun starts as several tasks refuses on every task (it
// would run the whole sweep once per task into one directory), and says what to do. The test
// plays the launcher by setting its environment; it runs where the binary was built without MPI
// (the sanitizer builds of run-tests).
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <string>
#include <vector>

extern char** environ;

namespace {

#ifndef SWEEP_HAVE_MPI
struct Ran {
  int exit_code = -1;
  std::string err;
};

Ran run_as_task(const std::string& size_variable, int rank) {
  std::vector<std::string> env_text;
  for (char** e = environ; *e; ++e) env_text.emplace_back(*e);
  env_text.push_back(size_variable + "=4");
  env_text.push_back("OMPI_COMM_WORLD_RANK=" + std::to_string(rank));
  env_text.push_back("SLURM_PROCID=" + std::to_string(rank));
  std::vector<char*> envp;
  for (auto& s : env_text) envp.push_back(s.data());
  envp.push_back(nullptr);
  int pipe_fds[2];
  EXPECT_EQ(::pipe(pipe_fds), 0);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], 2);
  posix_spawn_file_actions_addclose(&actions, pipe_fds[0]);
  std::string bin = SWEEP_BIN, cmd = "run", config = SWEEP_SOURCE_DIR "/configs/quickstart.yaml",
              dry = "--dry-run";
  std::array<char*, 5> argv = {bin.data(), cmd.data(), config.data(), dry.data(), nullptr};
  pid_t pid = 0;
  EXPECT_EQ(posix_spawn(&pid, bin.c_str(), &actions, nullptr, argv.data(), envp.data()), 0);
  posix_spawn_file_actions_destroy(&actions);
  ::close(pipe_fds[1]);
  Ran ran;
  char buffer[4096];
  for (ssize_t n; (n = ::read(pipe_fds[0], buffer, sizeof buffer)) > 0;) ran.err.append(buffer, n);
  ::close(pipe_fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ran.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return ran;
}

#endif

TEST(NoMpiBuild, RefusesToRunAsOneOfSeveralTasks) {
#ifdef SWEEP_HAVE_MPI
  GTEST_SKIP() << "built with MPI: this refusal is tested by a build without it (run-tests' "
                  "sanitizer builds, SWEEP_WITH_MPI=OFF)";
#else
  for (const char* variable : {"OMPI_COMM_WORLD_SIZE", "SLURM_STEP_NUM_TASKS", "PMI_SIZE"}) {
    const Ran rank0 = run_as_task(variable, 0);
    EXPECT_EQ(rank0.exit_code, 2) << variable << ": " << rank0.err;
    EXPECT_NE(rank0.err.find("as 4 tasks, but this sweep was built without MPI"), std::string::npos)
        << rank0.err;
    EXPECT_NE(rank0.err.find("Install libopenmpi-dev"), std::string::npos) << rank0.err;
    const Ran rank3 = run_as_task(variable, 3);  // refuses too, without repeating the message
    EXPECT_EQ(rank3.exit_code, 2) << variable;
    if (std::string(variable) != "PMI_SIZE") EXPECT_EQ(rank3.err, "") << variable;
  }
#endif
}

}  // namespace
