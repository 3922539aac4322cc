/*
 * checkpoint.cpp — serialise CheckpointData, write it atomically, read and verify it.
 *
 * The loop counters are listed once, in for_each_field, and both the writer and the reader walk
 * that list, so the two cannot drift apart; adding a field means bumping kVersion. The array sizes
 * and the identity's length sit in the header, each bounded before it is used. The header is read
 * alone first (it is at most kMaxHeaderBytes): it fixes the file's whole size, and a file of any
 * other size is refused (expected N bytes, got M) before the rest is read, so neither an
 * oversized file nor a value read from one sizes an allocation beyond what the header allows. Every
 * value read is checked before it is returned (flags are 0 or 1, counters are not negative): the
 * training loop indexes with them.
 */
#include "trainer/checkpoint.h"

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <type_traits>

#include "common/check.h"
#include "common/own_file.h"
#include "trainer/crc32.h"

namespace sweep::trainer {

namespace {

constexpr char kMagic[8] = {'S', 'W', 'E', 'E', 'P', 'C', 'K', 'P'};
// 2: LoopState::pending (the device's loss sums not yet folded into the host's). Version 1 files
// are still read: their pending sums were folded at save time, so pending is zero.
// 3: the identity of the trial (CheckpointIdentity), after the array sizes. Versions 1 and 2 are
// still read, without one (checkpoint.h says why).
constexpr std::uint32_t kVersion = 3;
constexpr std::uint32_t kFirstVersionWithIdentity = 3;
// The longest header: magic, version, six array sizes, then the identity (a name's length, the
// name, the trial number, the config hash).
constexpr std::size_t kMaxHeaderBytes =
    sizeof kMagic + 4 + 6 * 8 + 4 + kMaxCheckpointNameBytes + 8 + 8;

template <class S, class F>
void for_each_field(S& s, F&& f, std::uint32_t version = kVersion) {
  f(s.epoch);
  f(s.batch_in_epoch);
  f(s.iteration);
  f(s.optimizer_steps);
  f(s.epochs_completed);
  f(s.images_trained);
  f(s.elapsed_seconds);
  for (auto* acc : {&s.since_log, &s.since_validation, &s.this_epoch, &s.last_epoch}) {
    f(acc->loss_sum);
    f(acc->correct);
    f(acc->count);
  }
  f(s.validations);
  f(s.has_last_validation);
  f(s.last_val_loss);
  f(s.last_val_accuracy);
  f(s.has_best);
  f(s.best_metric);
  f(s.best_val_loss);
  f(s.best_val_accuracy);
  f(s.best_epoch);
  f(s.best_iteration);
  f(s.bad_validations);
  if (version >= 2) {
    f(s.pending.loss_sum);
    f(s.pending.correct);
    f(s.pending.count);
  }
}

template <class D, class F>
void for_each_array(D& d, F&& f) {
  f(d.params);
  f(d.state);
  f(d.optimizer_state1);
  f(d.optimizer_state2);
  f(d.best_params);
  f(d.best_state);
}

class ByteWriter {
 public:
  template <class T>
  void put(const T& v) {
    static_assert(std::is_arithmetic_v<T>);
    const auto* p = reinterpret_cast<const std::uint8_t*>(&v);
    bytes.insert(bytes.end(), p, p + sizeof(T));
  }
  void put_text(const std::string& text) {
    put(static_cast<std::uint32_t>(text.size()));
    bytes.insert(bytes.end(), text.begin(), text.end());
  }
  void put_floats(const std::vector<float>& v) {
    const auto* p = reinterpret_cast<const std::uint8_t*>(v.data());
    bytes.insert(bytes.end(), p, p + v.size() * sizeof(float));
  }
  std::vector<std::uint8_t> bytes;
};

class ByteReader {
 public:
  ByteReader(const std::vector<std::uint8_t>& b, const std::string& path)
      : bytes_(b), path_(path) {}
  template <class T>
  void get(T& v) {
    static_assert(std::is_arithmetic_v<T>);
    need(sizeof(T));
    std::memcpy(&v, bytes_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
  }
  // A flag is written as one byte, 0 or 1; any other byte would be a bool no code may read.
  void get(bool& v) {
    std::uint8_t byte = 0;
    get(byte);
    if (byte > 1)
      throw CheckpointUnreadable(path_ + ": checkpoint is corrupt (a flag holds " +
                                 std::to_string(byte) + ")");
    v = byte == 1;
  }
  void get_text(std::string& text, std::uint32_t max_bytes) {
    std::uint32_t n = 0;
    get(n);
    if (n > max_bytes)
      throw CheckpointUnreadable(path_ + ": checkpoint is corrupt (a name of " + std::to_string(n) +
                                 " bytes)");
    need(n);
    text.assign(reinterpret_cast<const char*>(bytes_.data() + pos_), n);
    pos_ += n;
  }
  void get_floats(std::vector<float>& v, std::uint64_t n) {
    need(n * sizeof(float));
    v.resize(n);
    if (n == 0) return;  // an empty vector's data() may be null, which memcpy must not get
    std::memcpy(v.data(), bytes_.data() + pos_, n * sizeof(float));
    pos_ += n * sizeof(float);
  }
  std::size_t pos() const { return pos_; }

 private:
  void need(std::size_t n) const {
    if (n > bytes_.size() - pos_)
      throw CheckpointUnreadable(path_ + ": checkpoint is truncated (expected at least " +
                                 std::to_string(pos_ + n) + " bytes, got " +
                                 std::to_string(bytes_.size()) + ")");
  }
  const std::vector<std::uint8_t>& bytes_;
  const std::string& path_;
  std::size_t pos_ = 0;
};

std::size_t loop_state_bytes(std::uint32_t version) {
  std::size_t n = 0;
  LoopState s;
  for_each_field(
      s, [&](auto& v) { n += sizeof(v); }, version);
  return n;
}

// "" when every counter of `s` can be the training loop's, else which one cannot: a step, epoch or
// count below zero, or a count of images that is not a whole number a double holds exactly.
std::string loop_state_problem(const LoopState& s) {
  const std::pair<const char*, std::int64_t> counters[] = {{"epoch", s.epoch},
                                                           {"batch", s.batch_in_epoch},
                                                           {"iteration", s.iteration},
                                                           {"optimizer step", s.optimizer_steps},
                                                           {"completed epochs", s.epochs_completed},
                                                           {"images trained", s.images_trained},
                                                           {"validations", s.validations},
                                                           {"best epoch", s.best_epoch},
                                                           {"best iteration", s.best_iteration},
                                                           {"bad validations", s.bad_validations}};
  for (const auto& [name, value] : counters)
    if (value < 0) return std::string(name) + " " + std::to_string(value);
  for (const LossAccumulator* acc :
       {&s.since_log, &s.since_validation, &s.this_epoch, &s.last_epoch, &s.pending})
    if (!(acc->count >= 0 && acc->count <= 9007199254740992.0 &&
          acc->count == std::floor(acc->count)))
      return "an image count of " + std::to_string(acc->count);
  if (!(s.elapsed_seconds >= 0)) return "elapsed time " + std::to_string(s.elapsed_seconds);
  return "";
}

}  // namespace

void write_checkpoint(const std::string& path, const CheckpointData& data) {
  ByteWriter w;
  std::size_t floats = 0;
  for_each_array(data, [&](const std::vector<float>& v) { floats += v.size(); });
  w.bytes.reserve(256 + loop_state_bytes(kVersion) + floats * sizeof(float));
  w.bytes.assign(kMagic, kMagic + sizeof kMagic);
  w.put(kVersion);
  for_each_array(data, [&](const std::vector<float>& v) { w.put(std::uint64_t(v.size())); });
  const CheckpointIdentity identity = data.identity.value_or(CheckpointIdentity{});
  if (identity.sweep.size() > kMaxCheckpointNameBytes)
    throw Error(path + ": a checkpoint holds a sweep name of at most " +
                std::to_string(kMaxCheckpointNameBytes) + " bytes");
  w.put_text(identity.sweep);
  w.put(identity.trial);
  w.put(identity.config_hash);
  w.put(data.seed);
  w.put(data.batch_size);
  w.put(data.train_size);
  for_each_field(data.loop, [&](const auto& v) { w.put(v); });
  for_each_array(data, [&](const std::vector<float>& v) { w.put_floats(v); });
  w.put(crc32_of(w.bytes.data(), w.bytes.size()));

  // Written as a file of sweep's own (common/own_file.h): never through a link, whole or not at
  // all.
  write_own_file_durably(
      path, std::string_view(reinterpret_cast<const char*>(w.bytes.data()), w.bytes.size()),
      "checkpoint");
}

CheckpointData read_checkpoint(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw CheckpointUnreadable(path + ": checkpoint file is missing");
  std::ifstream in(path, std::ios::binary);
  const auto file_size = std::filesystem::file_size(path, ec);
  if (!in || ec) throw CheckpointUnreadable(path + ": cannot open the checkpoint for reading");
  // The header alone first: it says how large the whole file must be.
  std::vector<std::uint8_t> bytes(std::min<std::uintmax_t>(file_size, kMaxHeaderBytes));
  in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  bytes.resize(static_cast<std::size_t>(in.gcount()));
  if (bytes.size() < sizeof kMagic || std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0)
    throw CheckpointUnreadable(path + ": not a sweep checkpoint (bad magic)");

  ByteReader r(bytes, path);
  std::vector<std::uint8_t> skip_magic(sizeof kMagic);
  for (auto& b : skip_magic) r.get(b);
  std::uint32_t version = 0;
  r.get(version);
  if (version < 1 || version > kVersion)
    throw CheckpointUnreadable(path + ": checkpoint version " + std::to_string(version) +
                               ", this build reads versions 1 to " + std::to_string(kVersion));
  std::uint64_t sizes[6];
  for (auto& s : sizes) r.get(s);
  std::uint64_t floats = 0;
  for (auto s : sizes) {
    if (s > (std::uint64_t(1) << 40))
      throw CheckpointUnreadable(path + ": checkpoint is corrupt (array of " + std::to_string(s) +
                                 " floats)");
    floats += s;
  }
  CheckpointData d;
  if (version >= kFirstVersionWithIdentity) {
    CheckpointIdentity identity;
    r.get_text(identity.sweep, kMaxCheckpointNameBytes);
    r.get(identity.trial);
    r.get(identity.config_hash);
    d.identity = std::move(identity);
  }
  const std::uintmax_t expected =
      r.pos() + 8 + 8 + 8 + loop_state_bytes(version) + floats * sizeof(float) + 4;
  if (file_size != expected)
    throw CheckpointUnreadable(path + ": checkpoint is " +
                               (file_size < expected ? "truncated" : "corrupt") + " (expected " +
                               std::to_string(expected) + " bytes, got " +
                               std::to_string(file_size) + ")");
  // The rest, now that its size is the header's: a file that changed meanwhile reads short.
  const std::size_t have = bytes.size();
  bytes.resize(static_cast<std::size_t>(expected));
  in.read(reinterpret_cast<char*>(bytes.data() + have),
          static_cast<std::streamsize>(bytes.size() - have));
  if (static_cast<std::size_t>(in.gcount()) != bytes.size() - have)
    throw CheckpointUnreadable(path + ": checkpoint is truncated (expected " +
                               std::to_string(expected) + " bytes, got " +
                               std::to_string(have + static_cast<std::size_t>(in.gcount())) + ")");
  std::uint32_t stored_crc = 0;
  std::memcpy(&stored_crc, bytes.data() + bytes.size() - 4, 4);
  if (stored_crc != crc32_of(bytes.data(), bytes.size() - 4))
    throw CheckpointUnreadable(path + ": checkpoint is corrupt (checksum mismatch)");

  r.get(d.seed);
  r.get(d.batch_size);
  r.get(d.train_size);
  for_each_field(
      d.loop, [&](auto& v) { r.get(v); }, version);
  if (const std::string problem = loop_state_problem(d.loop); !problem.empty())
    throw CheckpointUnreadable(path + ": checkpoint is corrupt (" + problem + ")");
  int i = 0;
  for_each_array(d, [&](std::vector<float>& v) { r.get_floats(v, sizes[i++]); });
  return d;
}

void check_checkpoint_identity(const std::string& path, const CheckpointData& d,
                               const CheckpointIdentity& mine) {
  if (!d.identity || *d.identity == mine) return;
  const CheckpointIdentity& theirs = *d.identity;
  auto trial_text = [](const CheckpointIdentity& id) {
    return id.trial < 0 && id.sweep.empty()
               ? std::string("a run outside any sweep")
               : "trial " + std::to_string(id.trial) + " of sweep '" + id.sweep + "'";
  };
  if (theirs.sweep != mine.sweep || theirs.trial != mine.trial)
    throw CheckpointRefused(path + ": checkpoint belongs to " + trial_text(theirs) + ", not to " +
                            trial_text(mine));
  char have[17], want[17];
  std::snprintf(have, sizeof have, "%016llx", static_cast<unsigned long long>(theirs.config_hash));
  std::snprintf(want, sizeof want, "%016llx", static_cast<unsigned long long>(mine.config_hash));
  throw CheckpointRefused(path + ": checkpoint was written by " + trial_text(theirs) +
                          " with another config (config hash " + have + " in the file, " + want +
                          " for this trial)");
}

void check_checkpoint_matches(const std::string& path, const CheckpointData& d, std::uint64_t seed,
                              std::int64_t batch_size, std::int64_t train_size,
                              std::size_t param_count, std::size_t state_count,
                              std::size_t optimizer_state1, std::size_t optimizer_state2) {
  auto mismatch = [&](const std::string& what, auto have, auto want) {
    throw CheckpointRefused(path + ": checkpoint belongs to a different run (" + what + " " +
                            std::to_string(have) + " in the file, " + std::to_string(want) +
                            " in this run)");
  };
  if (d.seed != seed) mismatch("training.seed", d.seed, seed);
  if (d.batch_size != batch_size) mismatch("batch size", d.batch_size, batch_size);
  if (d.train_size != train_size) mismatch("training-set size", d.train_size, train_size);
  if (d.params.size() != param_count) mismatch("parameter count", d.params.size(), param_count);
  if (d.state.size() != state_count) mismatch("batch-norm state size", d.state.size(), state_count);
  if (d.optimizer_state1.size() != optimizer_state1 ||
      d.optimizer_state2.size() != optimizer_state2)
    mismatch("optimizer state size", d.optimizer_state1.size() + d.optimizer_state2.size(),
             optimizer_state1 + optimizer_state2);
  if (!d.best_params.empty() && d.best_params.size() != param_count)
    mismatch("best-parameter count", d.best_params.size(), param_count);
}

std::string set_aside_checkpoint(const std::string& path, const CheckpointError& why) {
  const char* kind = dynamic_cast<const CheckpointRefused*>(&why) ? ".foreign-" : ".unreadable-";
  // RENAME_NOREPLACE: a file set aside earlier is never replaced, even by another process that
  // picks the same number. A file system without it gets a look first, then a plain rename.
  for (int n = 1; n <= 10000; ++n) {
    const std::string kept = path + kind + std::to_string(n);
    if (::renameat2(AT_FDCWD, path.c_str(), AT_FDCWD, kept.c_str(), RENAME_NOREPLACE) == 0)
      return kept;
    if (errno == EEXIST) continue;
    if (errno == EINVAL || errno == ENOSYS) {
      std::error_code ec;
      if (std::filesystem::exists(kept, ec)) continue;
      if (::rename(path.c_str(), kept.c_str()) == 0) return kept;
    }
    throw Error(path + ": cannot set the checkpoint aside as " + kept + ": " +
                std::strerror(errno));
  }
  throw Error(path + ": cannot set the checkpoint aside: 10000 files set aside already");
}

}  // namespace sweep::trainer
