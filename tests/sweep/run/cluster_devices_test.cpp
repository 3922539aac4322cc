// The slots of a sweep over several ranks: each rank's own devices, GPUs of a node split by local
// rank, rank 0 left out on request, and a clear error naming the rank that cannot give them.
#include "sweep/run/cluster_devices.h"

#include <gtest/gtest.h>

#include "sweep/config/config_error.h"

namespace sweep::run {
namespace {

using config::ResourcesSpec;
using scheduler::Device;

cluster::Hello host(const std::string& name, int local_rank, int local_size, int gpus) {
  return {name, local_rank, local_size, gpus, gpus > 0, 1};
}

std::vector<std::string> labels(const DevicePlan& plan) {
  std::vector<std::string> out;
  for (const Device& d : plan.executor.devices) out.push_back(d.label());
  return out;
}

TEST(ClusterDevices, CpuRanksOfferTheirSlots) {
  ResourcesSpec r;
  r.execution = "cpu";
  r.cpu_slots = 2;
  const DevicePlan plan =
      plan_cluster_devices(r, {host("a", 0, 1, 0), host("b", 0, 1, 0), host("c", 0, 1, 0)}, true);
  EXPECT_EQ(labels(plan), (std::vector<std::string>{"cpu:0", "rank1:cpu:0", "rank2:cpu:0"}));
  EXPECT_EQ(plan.executor.cpu_slots, 2);
  EXPECT_EQ(plan.description, "6 cpu slots on 3 ranks (3 in the job)");
  const DevicePlan hosts_only =
      plan_cluster_devices(r, {host("a", 0, 1, 0), host("b", 0, 1, 0), host("c", 0, 1, 0)}, false);
  EXPECT_EQ(labels(hosts_only), (std::vector<std::string>{"rank1:cpu:0", "rank2:cpu:0"}));
  EXPECT_NE(hosts_only.description.find("rank 0 coordinates only"), std::string::npos);
}

TEST(ClusterDevices, RanksSharingANodeSplitItsGpus) {
  ResourcesSpec r;  // auto: every GPU
  // Node a: ranks 0 and 1 share 4 GPUs; node b: rank 2 alone with 2.
  const DevicePlan plan =
      plan_cluster_devices(r, {host("a", 0, 2, 4), host("a", 1, 2, 4), host("b", 0, 1, 2)}, true);
  EXPECT_EQ(labels(plan),
            (std::vector<std::string>{"cuda:0", "cuda:1", "rank1:cuda:2", "rank1:cuda:3",
                                      "rank2:cuda:0", "rank2:cuda:1"}));
  EXPECT_EQ(plan.selected_gpus, 2);
  EXPECT_EQ(plan.description, "6 GPU slots on 3 ranks (3 in the job)");
}

TEST(ClusterDevices, MoreRanksThanGpusOnANodeIsAnErrorNamingTheRank) {
  ResourcesSpec r;
  try {
    plan_cluster_devices(r, {host("a", 0, 3, 2), host("a", 1, 3, 2), host("a", 2, 3, 2)}, true);
    FAIL() << "three ranks shared two GPUs";
  } catch (const config::ConfigError& e) {
    ASSERT_FALSE(e.messages().empty());
    EXPECT_NE(e.messages()[0].find("rank 0 (a): no GPU is left for it"), std::string::npos)
        << e.messages()[0];
    EXPECT_NE(e.messages()[0].find("--ntasks-per-node=2"), std::string::npos);
  }
}

TEST(ClusterDevices, ARankWithoutTheGpusAskedForIsNamed) {
  ResourcesSpec r;
  r.execution = "gpu";
  try {
    plan_cluster_devices(r, {host("a", 0, 1, 1), host("b", 0, 1, 0)}, true);
    FAIL() << "a GPU sweep accepted a rank without GPUs";
  } catch (const config::ConfigError& e) {
    EXPECT_NE(e.messages()[0].find("rank 1 (b): resources.execution: gpu asks for GPUs"),
              std::string::npos)
        << e.messages()[0];
  }
}

TEST(ClusterDevices, ACoordinatorAloneThatRunsNothingIsRefused) {
  ResourcesSpec r;
  r.execution = "cpu";
  EXPECT_THROW(plan_cluster_devices(r, {host("a", 0, 1, 0)}, false), config::ConfigError);
}

}  // namespace
}  // namespace sweep::run
