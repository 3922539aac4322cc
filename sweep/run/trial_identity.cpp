/*
 * trial_identity.cpp — see trial_identity.h.
 */
#include "sweep/run/trial_identity.h"

#include "sweep/config/train_config_writer.h"
#include "sweep/config/yaml_tree.h"

namespace sweep::run {

std::uint64_t trial_config_hash(const trainer::TrainConfig& config) {
  trainer::TrainConfig what_it_trains = config;
  what_it_trains.data.path.clear();
  const std::string text = config::emit_yaml(config::to_yaml(what_it_trains));
  std::uint64_t hash = 0xcbf29ce484222325ULL;  // FNV-1a's offset basis and prime (64 bits)
  for (const unsigned char c : text) {
    hash ^= c;
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

trainer::CheckpointIdentity trial_identity(const std::string& sweep_name, std::int64_t number,
                                           const trainer::TrainConfig& config) {
  return {sweep_name, number, trial_config_hash(config)};
}

}  // namespace sweep::run
