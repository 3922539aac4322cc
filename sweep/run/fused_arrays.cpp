/*
 * fused_arrays.cpp — see fused_arrays.h.
 */
#include "sweep/run/fused_arrays.h"

#include <algorithm>
#include <functional>
#include <map>

#include "trainer/array/fusion.h"

namespace sweep::run {

namespace {

// The most members per array, or 0 when this sweep does not fuse.
int fuse_cap(const config::SweepConfig& config, const FuseContext& context) {
  const int fuse = config.resources.fuse;
  if (config.trainer || context.cluster || fuse == 0 || fuse == 1) return 0;
  if (config.sweep.method == "tpe") return 0;
  if (config.resources.gpus_per_trial != 1 || config.resources.gpus_per_trial_all) return 0;
  if (fuse == config::ResourcesSpec::kFuseAuto)
    return context.on_gpu ? config::ResourcesSpec::kAutoFuseMembers : 0;
  return fuse;
}

// Cuts `group` into near-equal arrays of at most `cap`, at least min(slots, size) of them.
void cut(const std::vector<std::size_t>& group, int cap, int slots,
         std::vector<std::vector<std::size_t>>& out) {
  const std::size_t n = group.size();
  std::size_t arrays = (n + cap - 1) / std::size_t(cap);
  arrays = std::max(arrays, std::min(n, std::size_t(std::max(slots, 1))));
  std::size_t begin = 0;
  for (std::size_t a = 0; a < arrays; ++a) {
    const std::size_t size = n / arrays + (a < n % arrays ? 1 : 0);
    out.emplace_back(group.begin() + begin, group.begin() + begin + size);
    begin += size;
  }
}

}  // namespace

FuseContext fusion_context(const DevicePlan& devices, bool cluster) {
  FuseContext context;
  context.cluster = cluster;
  context.on_gpu = devices.selected_gpus > 0;
  context.slots = context.on_gpu ? devices.selected_gpus * devices.executor.trials_per_gpu
                                 : devices.executor.cpu_slots;
  return context;
}

std::vector<std::vector<std::size_t>> fuse_trials(const config::SweepConfig& config,
                                                  const std::vector<config::TrialPoint>& points,
                                                  const FuseContext& context) {
  std::vector<std::vector<std::size_t>> arrays;
  const int cap = fuse_cap(config, context);
  if (cap == 0) {
    for (std::size_t i = 0; i < points.size(); ++i) arrays.push_back({i});
    return arrays;
  }
  // Groups of one shape, in the order of their first trial; a trial whose config does not
  // resolve runs alone (and fails with its message when it starts).
  // Per group: its shape, and whether it is an unresolved trial's group of one (no shape).
  std::vector<trainer::TrainConfig> shapes;
  std::vector<bool> alone;
  std::vector<std::vector<std::size_t>> groups;
  for (std::size_t i = 0; i < points.size(); ++i) {
    config::Diagnostics diagnostics;
    const config::TrialPlan plan = config::resolve_trial(config, points[i], diagnostics);
    if (diagnostics.error_count() > 0) {
      groups.push_back({i});
      shapes.emplace_back();
      alone.push_back(true);
      continue;
    }
    const trainer::TrainConfig shape = trainer::array_shape(plan.config);
    std::size_t g = 0;
    while (g < groups.size() && (alone[g] || !(shapes[g] == shape))) ++g;
    if (g == groups.size()) {
      groups.emplace_back();
      shapes.push_back(shape);
      alone.push_back(false);
    }
    groups[g].push_back(i);
  }
  for (const auto& group : groups) cut(group, cap, context.slots, arrays);
  std::sort(arrays.begin(), arrays.end(),
            [](const auto& a, const auto& b) { return a.front() < b.front(); });
  return arrays;
}

std::string describe_fusion(const config::SweepConfig& config,
                            const std::vector<std::vector<std::size_t>>& arrays,
                            const FuseContext& context) {
  const int fuse = config.resources.fuse;
  if (fuse == 0 || fuse == 1) return "fuse: off";
  if (config.trainer) return "fuse: external commands run one by one";
  if (context.cluster) return "fuse: trials on MPI ranks run one by one";
  if (config.sweep.method == "tpe") return "fuse: tpe makes each trial from the results before it";
  if (config.resources.gpus_per_trial != 1 || config.resources.gpus_per_trial_all)
    return "fuse: multi-GPU trials run one by one";
  if (fuse == config::ResourcesSpec::kFuseAuto && !context.on_gpu)
    return "fuse: auto fuses on GPUs; this machine trains on the CPU";
  std::map<std::size_t, std::size_t, std::greater<>> arrays_of_size;  // size -> arrays
  std::size_t fused = 0, count = 0, total = 0;
  for (const auto& a : arrays) {
    total += a.size();
    if (a.size() > 1) {
      ++arrays_of_size[a.size()];
      fused += a.size();
      ++count;
    }
  }
  if (count == 0) return "fuse: no two trials have one shape";
  std::string text = "fused: " + std::to_string(count) + (count == 1 ? " array" : " arrays");
  if (arrays_of_size.size() == 1) {
    text += " of " + std::to_string(arrays_of_size.begin()->first) + " trials";
  } else {  // "5 arrays (4 x 8 + 1 x 3 trials)"
    std::string sizes;
    for (const auto& [size, n] : arrays_of_size)
      sizes += (sizes.empty() ? "" : " + ") + std::to_string(n) + " x " + std::to_string(size);
    text += " (" + sizes + " trials)";
  }
  return text + (fused < total ? ", the other trials alone" : "");
}

std::string trial_numbers(const std::vector<config::TrialPoint>& points,
                          const std::vector<std::size_t>& array) {
  std::string text;
  for (std::size_t k = 0; k < array.size();) {
    const int first = points[array[k]].number;
    std::size_t end = k + 1;
    while (end < array.size() && points[array[end]].number == first + int(end - k)) ++end;
    const int last = points[array[end - 1]].number;
    text += (text.empty() ? "" : ", ") + std::to_string(first) +
            (last == first ? "" : (last == first + 1 ? ", " : "-") + std::to_string(last));
    k = end;
  }
  return text;
}

}  // namespace sweep::run
