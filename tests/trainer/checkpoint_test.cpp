/*
 * checkpoint_test.cpp — the checkpoint file: round trip, atomic replacement, and every way a file
 * can be wrong (missing, truncated, flipped byte, foreign file, other run), each with a message
 * naming the file.
 */
#include "trainer/checkpoint.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "common/check.h"

namespace sweep::trainer {
namespace {

namespace fs = std::filesystem;

std::string temp_path(const std::string& name) {
  return (fs::temp_directory_path() / ("sweep_ckpt_" + std::to_string(::getpid()) + "_" + name))
      .string();
}

CheckpointData sample() {
  CheckpointData d;
  d.seed = 42;
  d.batch_size = 64;
  d.train_size = 6000;
  d.loop.epoch = 3;
  d.loop.batch_in_epoch = 17;
  d.loop.iteration = 298;
  d.loop.optimizer_steps = 298;
  d.loop.since_log.add(12.5, 40, 64);
  d.loop.has_best = true;
  d.loop.best_metric = 0.321;
  d.loop.best_epoch = 2;
  d.loop.bad_validations = 1;
  d.loop.elapsed_seconds = 3.25;
  for (int i = 0; i < 100; ++i) d.params.push_back(float(i) * 0.5f - 7.f);
  d.state = {1.f, 2.f};
  d.optimizer_state1 = std::vector<float>(100, 0.25f);
  d.best_params = std::vector<float>(100, -1.f);
  d.best_state = {3.f, 4.f};
  return d;
}

std::vector<char> bytes_of(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}
void put_bytes(const std::string& p, const std::vector<char>& b) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(b.data(), std::streamsize(b.size()));
}

template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(Checkpoint, RoundTripIsExact) {
  const std::string p = temp_path("roundtrip");
  const CheckpointData d = sample();
  write_checkpoint(p, d);
  EXPECT_FALSE(fs::exists(p + ".tmp"));
  const CheckpointData r = read_checkpoint(p);
  EXPECT_EQ(r.seed, 42u);
  EXPECT_EQ(r.loop.epoch, 3);
  EXPECT_EQ(r.loop.batch_in_epoch, 17);
  EXPECT_EQ(r.loop.iteration, 298);
  EXPECT_EQ(r.loop.since_log.loss_sum, 12.5);
  EXPECT_EQ(r.loop.since_log.count, 64);
  EXPECT_TRUE(r.loop.has_best);
  EXPECT_EQ(r.loop.best_metric, 0.321);
  EXPECT_EQ(r.loop.bad_validations, 1);
  EXPECT_EQ(r.loop.elapsed_seconds, 3.25);
  EXPECT_EQ(r.params, d.params);
  EXPECT_EQ(r.state, d.state);
  EXPECT_EQ(r.optimizer_state1, d.optimizer_state1);
  EXPECT_TRUE(r.optimizer_state2.empty());
  EXPECT_EQ(r.best_params, d.best_params);
  EXPECT_EQ(r.best_state, d.best_state);
  EXPECT_NO_THROW(check_checkpoint_matches(p, r, 42, 64, 6000, 100, 2, 100, 0));
  fs::remove(p);
}

TEST(Checkpoint, OverwriteReplacesTheOldFile) {
  const std::string p = temp_path("overwrite");
  CheckpointData d = sample();
  write_checkpoint(p, d);
  d.loop.iteration = 999;
  d.params.resize(10);
  write_checkpoint(p, d);
  EXPECT_EQ(read_checkpoint(p).loop.iteration, 999);
  EXPECT_EQ(read_checkpoint(p).params.size(), 10u);
  fs::remove(p);
}

TEST(Checkpoint, MissingTruncatedCorruptForeign) {
  const std::string p = temp_path("bad");
  EXPECT_NE(error_of([&] { read_checkpoint(p); }).find(p + ": checkpoint file is missing"),
            std::string::npos);

  write_checkpoint(p, sample());
  const std::vector<char> good = bytes_of(p);

  std::vector<char> cut(good.begin(), good.end() - 10);
  put_bytes(p, cut);
  std::string msg = error_of([&] { read_checkpoint(p); });
  EXPECT_NE(msg.find(p), std::string::npos) << msg;
  EXPECT_NE(msg.find("truncated"), std::string::npos) << msg;
  EXPECT_NE(msg.find("expected " + std::to_string(good.size()) + " bytes, got " +
                     std::to_string(cut.size())),
            std::string::npos)
      << msg;

  std::vector<char> flipped = good;
  flipped[good.size() / 2] ^= 0x40;
  put_bytes(p, flipped);
  msg = error_of([&] { read_checkpoint(p); });
  EXPECT_NE(msg.find("checksum"), std::string::npos) << msg;

  put_bytes(p, std::vector<char>{'P', 'K', 3, 4, 0, 0, 0, 0, 0, 0, 0, 0});  // a zip file
  msg = error_of([&] { read_checkpoint(p); });
  EXPECT_NE(msg.find(p + ": not a sweep checkpoint"), std::string::npos) << msg;

  std::vector<char> future = good;
  future[8] = 9;  // version field
  put_bytes(p, future);
  msg = error_of([&] { read_checkpoint(p); });
  EXPECT_NE(msg.find("version 9"), std::string::npos) << msg;
  fs::remove(p);
}

TEST(Checkpoint, OtherRunIsRefused) {
  const std::string p = temp_path("other");
  const CheckpointData d = sample();
  std::string msg = error_of([&] { check_checkpoint_matches(p, d, 43, 64, 6000, 100, 2, 100, 0); });
  EXPECT_NE(msg.find("different run"), std::string::npos) << msg;
  EXPECT_NE(msg.find("training.seed"), std::string::npos) << msg;
  msg = error_of([&] { check_checkpoint_matches(p, d, 42, 64, 6000, 101, 2, 101, 0); });
  EXPECT_NE(msg.find("parameter count 100 in the file, 101 in this run"), std::string::npos) << msg;
}

}  // namespace
}  // namespace sweep::trainer
