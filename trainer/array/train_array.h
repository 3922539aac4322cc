/*
 * train_array.h — many trials of one shape trained together on one device: a fused array.
 *
 * Every member is a whole trial: its own config (they differ in the fields fusion.h lists), its
 * own callback, checkpoint, interrupt flag and result. One thread drives them in lockstep: each
 * round launches every member's step (on a GPU, each member's recorded CUDA graph on its own
 * stream, so the GPU runs the members side by side), then does each member's bookkeeping. A
 * member makes exactly the calls its lone run makes, on its own weights, optimizer state, batch
 * order and statistics, so its numbers are its lone run's bit for bit; a member that diverges
 * touches nobody else. The members share one loaded copy of each data set on the host; each keeps
 * its own device copy (its own gathers from its own order).
 *
 * A member that ends (completed, stopped early by patience or its callback, diverged,
 * interrupted, failed) is finished at once: its final evaluation runs, its device memory is
 * returned, and `finished` is called, so it costs nothing in later rounds. Members are admitted
 * while the device has room: one that runs out of memory before its first step is set back and
 * admitted when another member ends (an array larger than the device trains in waves instead of
 * failing); with no other member running it fails with the memory error.
 *
 *   std::vector<ArrayMember> members = ...;  // configs that fusion_split() finds equal
 *   train_array(members, [&](std::size_t i, MemberEnd end) { record(i, end); });
 */
#pragma once

#include <cstddef>
#include <exception>
#include <functional>
#include <vector>

#include "trainer/train.h"

namespace sweep::trainer {

struct ArrayMember {
  TrainConfig config;
  TrainCallback* callback = nullptr;  // required
  RunControl control;                 // its own checkpoint path, resume flag, interrupt flag
};

struct MemberEnd {
  TrainResult result;        // when error is null
  std::exception_ptr error;  // the member failed (bad input, device error): result is empty
};

using MemberFinished = std::function<void(std::size_t member, MemberEnd end)>;

struct ArrayOptions {
  int max_active = 0;  // members training at once; 0 = as many as the device holds
};

// What the array did: how many members trained at once at most (fewer than the members when the
// device held no more, or max_active capped them).
struct ArrayReport {
  std::size_t most_active = 0;
};

// Trains every member; calls `finished` once per member, on this thread, as each ends; returns
// when all have ended. Throws sweep::Error before training anything when there are no members, a
// callback is missing, a member trains on several devices, or two members' shapes differ
// (fusion_split). An exception thrown by `finished` ends the array and propagates.
ArrayReport train_array(const std::vector<ArrayMember>& members, const MemberFinished& finished,
                        const ArrayOptions& options = {});

}  // namespace sweep::trainer
