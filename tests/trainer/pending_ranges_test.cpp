/*
 * pending_ranges_test.cpp — the rule that decides when the CUDA backend's main stream must wait
 * for weight gradients queued on its side stream (trainer/cuda/pending_ranges.h): only a write
 * against a pending read or write, or a read against a pending write, of overlapping bytes. Plain
 * C++, so it runs without a GPU; tests/trainer/cuda/cuda_overlap_test.cpp checks the wiring on a
 * device.
 */
#include "trainer/cuda/pending_ranges.h"

#include <gtest/gtest.h>

#include <array>

namespace sweep::trainer::cuda {
namespace {

TEST(PendingRanges, AWriteOverAPendingReadConflicts) {
  std::array<float, 64> buf{};
  PendingRanges p;
  p.add({{&buf[0], 16 * sizeof(float)}}, {});
  EXPECT_TRUE(p.conflicts({}, {{&buf[8], 4 * sizeof(float)}}));    // inside
  EXPECT_TRUE(p.conflicts({}, {{&buf[15], 4 * sizeof(float)}}));   // over its last float
  EXPECT_FALSE(p.conflicts({}, {{&buf[16], 4 * sizeof(float)}}));  // just after: disjoint
  EXPECT_FALSE(p.conflicts({{&buf[0], 16 * sizeof(float)}}, {}));  // two reads never conflict
}

TEST(PendingRanges, AReadOrWriteOverAPendingWriteConflicts) {
  std::array<float, 64> buf{};
  PendingRanges p;
  p.add({}, {{&buf[32], 8 * sizeof(float)}});
  EXPECT_TRUE(p.conflicts({{&buf[30], 4 * sizeof(float)}}, {}));
  EXPECT_TRUE(p.conflicts({}, {{&buf[39], sizeof(float)}}));
  EXPECT_FALSE(p.conflicts({{&buf[0], 32 * sizeof(float)}}, {{&buf[40], 24 * sizeof(float)}}));
}

TEST(PendingRanges, NullOrEmptyRangesAreNothing) {
  std::array<float, 8> buf{};
  PendingRanges p;
  p.add({{nullptr, 64}, {&buf[0], 0}}, {{nullptr, 64}});
  EXPECT_TRUE(p.empty());
  p.add({{&buf[0], sizeof buf}}, {});
  EXPECT_FALSE(p.conflicts({}, {{nullptr, 1024}, {&buf[0], 0}}));  // a skipped dx or db
}

TEST(PendingRanges, ClearForgetsEverything) {
  std::array<float, 8> buf{};
  PendingRanges p;
  p.add({{&buf[0], sizeof buf}}, {{&buf[0], sizeof buf}});
  EXPECT_FALSE(p.empty());
  p.clear();
  EXPECT_TRUE(p.empty());
  EXPECT_FALSE(p.conflicts({{&buf[0], sizeof buf}}, {{&buf[0], sizeof buf}}));
}

// A residual block's backward, as the backend sees it: conv j's weight gradient reads ping (its
// dy) on the side stream; the batch norm below writes its dx into pong (no wait), and the conv
// below it writes ping again (must wait).
TEST(PendingRanges, APingPongBufferRewrittenALayerLaterWaits) {
  std::array<float, 256> ping{}, pong{}, act{}, grads{};
  PendingRanges p;
  p.add({{act.data(), sizeof act}, {ping.data(), sizeof ping}}, {{grads.data(), 64}});
  EXPECT_FALSE(p.conflicts({{pong.data(), sizeof pong}, {act.data(), sizeof act}},
                           {{pong.data(), sizeof pong}}));
  EXPECT_TRUE(p.conflicts({{pong.data(), sizeof pong}}, {{ping.data(), sizeof ping}}));
}

}  // namespace
}  // namespace sweep::trainer::cuda
