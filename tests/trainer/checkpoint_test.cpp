/*
 * checkpoint_test.cpp — the checkpoint file: round trip, atomic replacement, and every way a file
 * can be wrong (missing, truncated, flipped byte, foreign file, other run, another trial's, an
 * impossible value behind a good checksum), each with a message naming the file; files of the
 * versions before identities; setting an unusable file aside; an oversized file refused from its
 * header; no symbolic link written through.
 */
#include "trainer/checkpoint.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <zlib.h>

#include <chrono>
#include <cstring>
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
  d.identity = CheckpointIdentity{"quickstart", 7, 0x0123456789abcdefULL};
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
  EXPECT_EQ(r.identity, d.identity);
  EXPECT_NO_THROW(check_checkpoint_matches(p, r, 42, 64, 6000, 100, 2, 100, 0));
  EXPECT_NO_THROW(check_checkpoint_identity(p, r, *d.identity));
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

// The header says how large the file must be; a larger one is refused before the rest is read,
// so a file of any size costs only its header's few kilobytes.
TEST(Checkpoint, AnOversizedFileIsRefusedFromItsHeaderBeforeItIsRead) {
  const std::string p = temp_path("oversized");
  write_checkpoint(p, sample());
  const auto size = fs::file_size(p);
  const std::uintmax_t huge = std::uintmax_t(20) << 30;
  fs::resize_file(p, huge);  // sparse: no disk is used
  rusage before{};
  ::getrusage(RUSAGE_SELF, &before);
  const auto start = std::chrono::steady_clock::now();
  const std::string msg = error_of([&] { read_checkpoint(p); });
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  rusage after{};
  ::getrusage(RUSAGE_SELF, &after);
  fs::remove(p);
  EXPECT_NE(msg.find(p + ": checkpoint is corrupt (expected " + std::to_string(size) +
                     " bytes, got " + std::to_string(huge) + ")"),
            std::string::npos)
      << msg;
  EXPECT_LT(seconds, 5.0);
  EXPECT_LT(after.ru_maxrss - before.ru_maxrss, 64 * 1024) << "KiB more at the peak";
}

// The temporary a checkpoint is written through is a file of sweep's own: a symbolic link planted
// at its name is refused, never written through. A link at the checkpoint's own name is replaced
// by the rename, its target untouched.
TEST(Checkpoint, ASymbolicLinkIsNeverWrittenThrough) {
  const std::string p = temp_path("linked");
  const std::string victim = temp_path("victim");
  std::ofstream(victim) << "not sweep's\n";
  fs::create_symlink(victim, p + ".tmp");
  const std::string msg = error_of([&] { write_checkpoint(p, sample()); });
  EXPECT_NE(msg.find(p + ".tmp is a symbolic link: sweep writes its own files only as regular "
                         "files; remove the link"),
            std::string::npos)
      << msg;
  const std::vector<char> untouched = bytes_of(victim);
  EXPECT_EQ(std::string(untouched.begin(), untouched.end()), "not sweep's\n");
  EXPECT_FALSE(fs::exists(p));

  fs::remove(p + ".tmp");
  fs::create_symlink(victim, p);
  write_checkpoint(p, sample());
  EXPECT_FALSE(fs::is_symlink(fs::symlink_status(p)));
  EXPECT_EQ(read_checkpoint(p).params, sample().params);
  const std::vector<char> kept = bytes_of(victim);
  EXPECT_EQ(std::string(kept.begin(), kept.end()), "not sweep's\n");
  fs::remove(p);
  fs::remove(victim);
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

// The bytes of `p` with the CRC-32 of all but the last four written into those four: a file whose
// checksum is right, whatever else is wrong with it.
void put_with_crc(const std::string& p, std::vector<char> bytes) {
  const auto crc = static_cast<std::uint32_t>(crc32(crc32(0L, Z_NULL, 0),
                                                    reinterpret_cast<const Bytef*>(bytes.data()),
                                                    static_cast<uInt>(bytes.size() - 4)));
  std::memcpy(bytes.data() + bytes.size() - 4, &crc, 4);
  put_bytes(p, bytes);
}

// Offsets in a version-3 file: magic 8, version 4, six array sizes 48, then the identity.
constexpr std::size_t kIdentityAt = 60;

TEST(Checkpoint, AnotherTrialsOrAnotherConfigsCheckpointIsRefusedNamingBoth) {
  const std::string p = temp_path("identity");
  write_checkpoint(p, sample());
  const CheckpointData d = read_checkpoint(p);
  std::string msg = error_of([&] {
    check_checkpoint_identity(p, d, {"quickstart", 0, 0x0123456789abcdefULL});
  });
  EXPECT_NE(msg.find(p + ": checkpoint belongs to trial 7 of sweep 'quickstart', not to trial 0 "
                         "of sweep 'quickstart'"),
            std::string::npos)
      << msg;
  msg = error_of([&] { check_checkpoint_identity(p, d, {"other", 7, 0x0123456789abcdefULL}); });
  EXPECT_NE(msg.find("not to trial 7 of sweep 'other'"), std::string::npos) << msg;
  msg = error_of([&] { check_checkpoint_identity(p, d, {"quickstart", 7, 1}); });
  EXPECT_NE(msg.find("with another config (config hash 0123456789abcdef in the file, "
                     "0000000000000001 for this trial)"),
            std::string::npos)
      << msg;
  msg = error_of([&] { check_checkpoint_identity(p, d, {}); });
  EXPECT_NE(msg.find("not to a run outside any sweep"), std::string::npos) << msg;
  EXPECT_THROW(check_checkpoint_identity(p, d, {"quickstart", 0, 0x0123456789abcdefULL}),
               CheckpointRefused);
  EXPECT_THROW(check_checkpoint_matches(p, d, 43, 64, 6000, 100, 2, 100, 0), CheckpointRefused);
  fs::remove(p);
}

// A file of version 2 (before identities): read, without an identity, and accepted by any trial
// whose run checks pass (checkpoint.h says why).
TEST(Checkpoint, AVersionTwoFileIsReadWithoutAnIdentity) {
  const std::string p = temp_path("v2");
  CheckpointData d = sample();
  d.identity = CheckpointIdentity{};  // the empty identity: 4 + 0 + 8 + 8 bytes after the sizes
  write_checkpoint(p, d);
  std::vector<char> bytes = bytes_of(p);
  bytes.erase(bytes.begin() + kIdentityAt, bytes.begin() + kIdentityAt + 20);
  bytes[8] = 2;  // the version
  put_with_crc(p, bytes);
  const CheckpointData r = read_checkpoint(p);
  EXPECT_FALSE(r.identity.has_value());
  EXPECT_EQ(r.params, d.params);
  EXPECT_EQ(r.loop.iteration, 298);
  EXPECT_NO_THROW(check_checkpoint_identity(p, r, {"quickstart", 3, 99}));
  fs::remove(p);
}

// Behind a right checksum, values no writer makes: a flag of 2, a negative epoch, a name longer
// than its bound. Each is refused as unreadable rather than handed to the training loop.
TEST(Checkpoint, ImpossibleValuesBehindAGoodChecksumAreUnreadable) {
  const std::string p = temp_path("impossible");
  write_checkpoint(p, sample());
  const std::vector<char> good = bytes_of(p);
  // After the identity ("quickstart": 4 + 10 + 8 + 8) and seed, batch, training-set size (24).
  const std::size_t loop_at = kIdentityAt + 30 + 24;
  std::vector<char> negative = good;
  const std::int32_t epoch = -3;
  std::memcpy(negative.data() + loop_at, &epoch, 4);
  put_with_crc(p, negative);
  std::string msg = error_of([&] { read_checkpoint(p); });
  EXPECT_NE(msg.find("checkpoint is corrupt (epoch -3)"), std::string::npos) << msg;
  EXPECT_THROW(read_checkpoint(p), CheckpointUnreadable);

  // has_last_validation: after 4+8+8+8+4+8+8 bytes of counters, 4 accumulators of 24, and the
  // 4-byte validation count.
  std::vector<char> flag = good;
  flag[loop_at + 48 + 96 + 4] = 2;
  put_with_crc(p, flag);
  msg = error_of([&] { read_checkpoint(p); });
  EXPECT_NE(msg.find("checkpoint is corrupt (a flag holds 2)"), std::string::npos) << msg;

  std::vector<char> long_name = good;
  const std::uint32_t length = kMaxCheckpointNameBytes + 1;
  std::memcpy(long_name.data() + kIdentityAt, &length, 4);
  put_with_crc(p, long_name);
  msg = error_of([&] { read_checkpoint(p); });
  EXPECT_NE(msg.find("checkpoint is corrupt (a name of 4097 bytes)"), std::string::npos) << msg;
  fs::remove(p);
}

// An unusable file is renamed beside its place, never over an earlier one, and kept as it was.
TEST(Checkpoint, SettingAsideKeepsEveryFileUnderANameOfItsKind) {
  const std::string p = temp_path("aside");
  for (const char* suffix : {".unreadable-1", ".unreadable-2", ".foreign-1"})
    fs::remove(p + suffix);
  const CheckpointUnreadable unreadable("cut short");
  const CheckpointRefused refused("another trial's");
  std::ofstream(p) << "first";
  EXPECT_EQ(set_aside_checkpoint(p, unreadable), p + ".unreadable-1");
  EXPECT_FALSE(fs::exists(p));
  std::ofstream(p) << "second";
  EXPECT_EQ(set_aside_checkpoint(p, unreadable), p + ".unreadable-2");
  std::ofstream(p) << "third";
  EXPECT_EQ(set_aside_checkpoint(p, refused), p + ".foreign-1");
  EXPECT_EQ(bytes_of(p + ".unreadable-1"), (std::vector<char>{'f', 'i', 'r', 's', 't'}));
  EXPECT_EQ(bytes_of(p + ".foreign-1").size(), 5u);
  EXPECT_NE(
      error_of([&] { set_aside_checkpoint(p, refused); }).find("cannot set the checkpoint aside"),
      std::string::npos);
  for (const char* suffix : {".unreadable-1", ".unreadable-2", ".foreign-1"})
    fs::remove(p + suffix);
}

}  // namespace
}  // namespace sweep::trainer
