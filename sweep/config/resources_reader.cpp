/*
 * resources_reader.cpp — the `resources` section (run/devices.h turns it into devices).
 */
#include "sweep/config/resources_reader.h"

#include <algorithm>

namespace sweep::config {

void read_resources(MapReader r, ResourcesSpec& out) {
  r.choice("execution", out.execution, {"auto", "cpu", "gpu", "multi-gpu"}, "execution");
  const YAML::Node gpus = r.node("gpus");
  if (gpus.IsDefined()) {
    if (gpus.IsScalar() && gpus.Scalar() == "all") {
      out.all_gpus = true;
    } else if (gpus.IsSequence()) {
      std::vector<int> list;
      if (r.integer_list("gpus", list, Range::closed(0, 1023))) {
        std::vector<int> sorted = list;
        std::sort(sorted.begin(), sorted.end());
        if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
          r.error("gpus", "lists a GPU twice");
        else if (list.empty())
          r.error("gpus", "the list is empty (use gpus: all, or execution: cpu)");
        out.all_gpus = false;
        out.gpus = list;
      }
    } else {
      r.error("gpus",
              "expected 'all' or a list of GPU indices such as [0, 2], got " + describe_node(gpus));
    }
  }
  const Range slots = Range::closed(1, kMaxSlotsPerDevice);
  r.integer("cpu_slots", out.cpu_slots, slots);
  r.integer("trials_per_gpu", out.trials_per_gpu, slots);
  if (const YAML::Node n = r.node("gpus_per_trial"); n.IsDefined()) {
    if (n.IsScalar() && n.Scalar() == "all")
      out.gpus_per_trial_all = true;
    else
      r.integer("gpus_per_trial", out.gpus_per_trial, Range::at_least(1));
  }
  r.integer("cpu_threads", out.cpu_threads, Range::closed(0, kMaxSlotsPerDevice));
  r.number("trial_timeout", out.trial_timeout, Range::at_least(0));
  if (const YAML::Node n = r.node("fuse"); n.IsDefined()) {
    if (n.IsScalar() && n.Scalar() == "auto")
      out.fuse = ResourcesSpec::kFuseAuto;
    else if (n.IsScalar() && (n.Scalar() == "off" || n.Scalar() == "false"))
      out.fuse = 0;
    else if (std::int64_t k = 0; read_integer(n, k) || k < 1 || k > 100000)
      r.error("fuse",
              "expected auto, off, or the most trials per fused array (an integer >= 1), "
              "got " +
                  describe_node(n));
    else
      out.fuse = static_cast<int>(k);
  }
  r.finish();
}

}  // namespace sweep::config
