// The launchers' environment is read as each launcher writes it; a bad SWEEP_RANK_TIMEOUT is a
// clear error.
#include "cluster/launch.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include "common/check.h"

namespace sweep::cluster {
namespace {

class LaunchEnv : public ::testing::Test {
 protected:
  void SetUp() override { clear(); }
  void TearDown() override { clear(); }
  static void clear() {
    for (const char* name :
         {"OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK", "PMI_SIZE", "PMI_RANK",
          "SLURM_STEP_NUM_TASKS", "SLURM_PROCID", kRankTimeoutVariable, kCoordinatorOnlyVariable})
      ::unsetenv(name);
  }
};

TEST_F(LaunchEnv, NoLauncherIsOneTask) { EXPECT_EQ(detect_launch().size, 1); }

TEST_F(LaunchEnv, MpirunSrunAndPmiAreRecognised) {
  ::setenv("SLURM_STEP_NUM_TASKS", "3", 1);
  ::setenv("SLURM_PROCID", "2", 1);
  EXPECT_EQ(detect_launch().size, 3);
  EXPECT_EQ(detect_launch().rank, 2);
  EXPECT_EQ(detect_launch().launcher, "srun");
  ::setenv("OMPI_COMM_WORLD_SIZE", "4", 1);
  ::setenv("OMPI_COMM_WORLD_RANK", "1", 1);
  EXPECT_EQ(detect_launch().launcher, "mpirun");  // mpirun inside an allocation: mpirun's view
  EXPECT_EQ(detect_launch().size, 4);
  ::unsetenv("OMPI_COMM_WORLD_SIZE");
  ::unsetenv("SLURM_STEP_NUM_TASKS");
  ::setenv("PMI_SIZE", "2", 1);
  EXPECT_EQ(detect_launch().size, 2);
}

TEST_F(LaunchEnv, GarbageIsNotALaunch) {
  ::setenv("OMPI_COMM_WORLD_SIZE", "four", 1);
  EXPECT_EQ(detect_launch().size, 1);
}

TEST_F(LaunchEnv, RankTimeoutComesFromTheEnvironment) {
  EXPECT_EQ(cluster_options_from_environment().rank_timeout_s, kDefaultRankTimeoutS);
  ::setenv(kRankTimeoutVariable, "2.5", 1);
  EXPECT_EQ(cluster_options_from_environment().rank_timeout_s, 2.5);
  for (const char* bad : {"0", "-1", "soon", "1e9"}) {
    ::setenv(kRankTimeoutVariable, bad, 1);
    EXPECT_THROW(cluster_options_from_environment(), Error) << bad;
  }
}

TEST_F(LaunchEnv, TheCoordinatorRunsTrialsUnlessToldOtherwise) {
  EXPECT_TRUE(cluster_options_from_environment().coordinator_runs_trials);
  ::setenv(kCoordinatorOnlyVariable, "1", 1);
  EXPECT_FALSE(cluster_options_from_environment().coordinator_runs_trials);
  ::setenv(kCoordinatorOnlyVariable, "yes", 1);
  EXPECT_THROW(cluster_options_from_environment(), Error);
}

}  // namespace
}  // namespace sweep::cluster
