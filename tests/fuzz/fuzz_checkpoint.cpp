/*
 * fuzz_checkpoint.cpp — fuzzes the checkpoint reader (read_checkpoint) and the checks that decide
 * whether a run resumes from a file (check_checkpoint_identity, check_checkpoint_matches).
 *
 * Input: one flag byte, then the file, its CRC-32 made right when the flag's low bit is set
 * (crc_flag_input.h). sweep::Error is the expected refusal; a file that reads must hold what its
 * header says (arrays whose floats fit in the file, a sweep name within kMaxCheckpointNameBytes, no
 * counter below zero), its checks against its own values must pass, and another trial's identity
 * must be refused.
 */
#include <vector>

#include "common/check.h"
#include "crc_flag_input.h"
#include "fuzz_target.h"
#include "memory_file.h"
#include "trainer/checkpoint.h"

using sweep::trainer::CheckpointData;
using sweep::trainer::CheckpointIdentity;

namespace {

void check(const std::string& path, const CheckpointData& d, std::size_t file_bytes) {
  const std::size_t floats = d.params.size() + d.state.size() + d.optimizer_state1.size() +
                             d.optimizer_state2.size() + d.best_params.size() + d.best_state.size();
  fuzz_require(floats * sizeof(float) < file_bytes, "the arrays' floats are the file's");
  fuzz_require(!d.identity || d.identity->sweep.size() <= sweep::trainer::kMaxCheckpointNameBytes,
               "the sweep name is within its bound");
  fuzz_require(d.loop.epoch >= 0 && d.loop.batch_in_epoch >= 0 && d.loop.iteration >= 0 &&
                   d.loop.epochs_completed >= 0 && d.loop.pending.count >= 0,
               "no counter is below zero");
  const CheckpointIdentity own = d.identity.value_or(CheckpointIdentity{});
  sweep::trainer::check_checkpoint_identity(path, d, own);  // its own identity: must pass
  if (d.identity) {
    CheckpointIdentity other = own;
    other.sweep += "+";
    bool refused = false;
    try {
      sweep::trainer::check_checkpoint_identity(path, d, other);
    } catch (const sweep::trainer::CheckpointRefused&) {
      refused = true;
    }
    fuzz_require(refused, "another sweep's trial is refused");
  }
  // Against its own run's values only its best copy may disagree (a size other than the params').
  try {
    sweep::trainer::check_checkpoint_matches(path, d, d.seed, d.batch_size, d.train_size,
                                             d.params.size(), d.state.size(),
                                             d.optimizer_state1.size(), d.optimizer_state2.size());
  } catch (const sweep::trainer::CheckpointRefused&) {
    fuzz_require(!d.best_params.empty() && d.best_params.size() != d.params.size(),
                 "a file is refused by its own run's values only for its best copy");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > kFuzzMaxLen || size < 1) return -1;
  static MemoryFile file("checkpoint");
  const std::vector<std::uint8_t> bytes = file_of_crc_flag_input(data, size);
  file.write(bytes.data(), bytes.size());
  try {
    check(file.path(), sweep::trainer::read_checkpoint(file.path()), bytes.size());
  } catch (const sweep::Error&) {
  }
  return 0;
}
