/*
 * decode_cache.cpp — the cache file of decode_cache.h: hashing, writing, strict reading.
 */
#include "trainer/data/decode_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cstring>
#include <random>
#include <utility>

#include "common/check.h"
#include "common/own_file.h"
#include "common/sweep_home.h"
#include "trainer/data/image_decode.h"

namespace sweep::trainer {

namespace fs = std::filesystem;

namespace {

constexpr char kMagic[8] = {'S', 'W', 'E', 'E', 'P', 'I', 'M', 'G'};
constexpr std::uint32_t kVersion = 1;  // also the decoders' version: raise it when pixels change

// FNV-1a, 64 bits: names files and spots a changed listing early; the listing itself is then
// compared entry by entry, so a collision costs a decode, never wrong data.
struct Hash {
  std::uint64_t h = 0xcbf29ce484222325ull;
  void bytes(const void* p, std::size_t n) {
    const auto* b = static_cast<const std::uint8_t*>(p);
    for (std::size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 0x100000001b3ull;
  }
  void text(const std::string& s) {
    const std::uint64_t n = s.size();
    bytes(&n, sizeof n);
    bytes(s.data(), s.size());
  }
  template <class T>
  void value(T v) {
    bytes(&v, sizeof v);
  }
};

std::uint64_t listing_hash(const FolderListing& listing) {
  Hash h;
  for (const std::string& c : listing.class_names) h.text(c);
  for (const FolderFile& f : listing.files) {
    h.text(f.relative);
    h.value(f.size);
    h.value(f.mtime_ns);
    h.value(f.label);
  }
  return h.h;
}

std::int32_t settings_of(const FolderSpec& spec, int i) {
  const std::int32_t values[5] = {spec.channels, spec.height, spec.width,
                                  static_cast<std::int32_t>(spec.resize),
                                  static_cast<std::int32_t>(spec.on_bad_file)};
  return values[i];
}

// Appends values to a byte string (the header is small; the pixels are written separately).
struct Writer {
  std::string out;
  template <class T>
  void value(T v) {
    out.append(reinterpret_cast<const char*>(&v), sizeof v);
  }
  void text(const std::string& s) {
    value(static_cast<std::uint32_t>(s.size()));
    out += s;
  }
};

// Reads values from a byte span; any read past the end sets `bad`.
struct Reader {
  const std::uint8_t* p;
  std::size_t left;
  bool bad = false;
  template <class T>
  T value() {
    T v{};
    if (left < sizeof v) {
      bad = true;
      return v;
    }
    std::memcpy(&v, p, sizeof v);
    p += sizeof v;
    left -= sizeof v;
    return v;
  }
  std::string text() {
    const auto n = value<std::uint32_t>();
    if (bad || left < n) {
      bad = true;
      return {};
    }
    std::string s(reinterpret_cast<const char*>(p), n);
    p += n;
    left -= n;
    return s;
  }
};

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd != -1) ::close(fd);
  }
};

bool read_all(int fd, void* to, std::size_t n) {
  auto* p = static_cast<std::uint8_t*>(to);
  while (n > 0) {
    const ssize_t got = ::read(fd, p, n);
    if (got == -1 && errno == EINTR) continue;
    if (got <= 0) return false;
    p += got;
    n -= static_cast<std::size_t>(got);
  }
  return true;
}

void write_all(int fd, const void* from, std::size_t n, const fs::path& path) {
  const auto* p = static_cast<const std::uint8_t*>(from);
  while (n > 0) {
    const ssize_t put = ::write(fd, p, n);
    if (put == -1 && errno == EINTR) continue;
    if (put == -1) throw Error("cannot write " + path.string() + ": " + std::strerror(errno));
    p += put;
    n -= static_cast<std::size_t>(put);
  }
}

std::uint32_t crc_of(std::uint32_t crc, const void* p, std::size_t n) {
  return static_cast<std::uint32_t>(
      crc32_z(crc, static_cast<const Bytef*>(p), static_cast<z_size_t>(n)));
}

}  // namespace

fs::path folder_cache_path(const FolderListing& listing, const FolderSpec& spec) {
  fs::path dir;
  if (!spec.cache_dir.empty())
    dir = spec.cache_dir;
  else if (const std::optional<fs::path> home = sweep_home())
    dir = *home / "cache" / "folders";
  else
    return {};
  std::error_code ec;
  const fs::path root = fs::weakly_canonical(fs::absolute(listing.root, ec), ec);
  Hash h;
  h.text(root.string());
  for (int i = 0; i < 5; ++i) h.value(settings_of(spec, i));
  h.value(kVersion);
  char name[48];
  std::snprintf(name, sizeof name, "folder-%016llx.sweepimg", static_cast<unsigned long long>(h.h));
  return dir / name;
}

std::optional<CachedFolder> read_folder_cache(const fs::path& path, const FolderListing& listing,
                                              const FolderSpec& spec) {
  Fd file{::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)};
  if (file.fd == -1) return std::nullopt;
  struct stat st {};
  if (::fstat(file.fd, &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  // The fixed start first: a stale file (another listing) is told without reading its pixels.
  constexpr std::size_t kFixed = 8 + 4 + 8;
  std::uint8_t fixed[kFixed];
  if (std::size_t(st.st_size) < kFixed + 4 || !read_all(file.fd, fixed, kFixed))
    return std::nullopt;
  std::uint32_t version = 0;
  std::uint64_t hash = 0;
  std::memcpy(&version, fixed + 8, 4);
  std::memcpy(&hash, fixed + 12, 8);
  if (std::memcmp(fixed, kMagic, 8) != 0 || version != kVersion || hash != listing_hash(listing))
    return std::nullopt;
  std::vector<std::uint8_t> rest(std::size_t(st.st_size) - kFixed);
  if (!read_all(file.fd, rest.data(), rest.size())) return std::nullopt;
  std::uint32_t stored_crc = 0;
  std::memcpy(&stored_crc, rest.data() + rest.size() - 4, 4);
  const std::uint32_t crc = crc_of(crc_of(0, fixed, kFixed), rest.data(), rest.size() - 4);
  if (crc != stored_crc) return std::nullopt;

  Reader r{rest.data(), rest.size() - 4};
  for (int i = 0; i < 5; ++i)
    if (r.value<std::int32_t>() != settings_of(spec, i)) return std::nullopt;
  CachedFolder out;
  Dataset& d = out.data;
  d.c = r.value<std::int32_t>();
  d.h = r.value<std::int32_t>();
  d.w = r.value<std::int32_t>();
  d.classes = r.value<std::int32_t>();
  const auto n = r.value<std::int64_t>();
  if (r.bad || d.classes != int(listing.class_names.size())) return std::nullopt;
  if (r.value<std::uint32_t>() != listing.class_names.size()) return std::nullopt;
  for (const std::string& name : listing.class_names)
    if (r.text() != name) return std::nullopt;
  if (r.value<std::uint64_t>() != listing.files.size()) return std::nullopt;
  out.skip_reasons.resize(listing.files.size());
  std::int64_t used = 0;
  for (std::size_t i = 0; i < listing.files.size(); ++i) {
    FolderFile f;
    f.relative = r.text();
    f.size = r.value<std::int64_t>();
    f.mtime_ns = r.value<std::int64_t>();
    f.label = r.value<std::int32_t>();
    out.skip_reasons[i] = r.text();
    if (r.bad || !(f == listing.files[i])) return std::nullopt;
    if (out.skip_reasons[i].empty()) ++used;
  }
  if (d.c < 1 || d.h < 1 || d.w < 1 || n != used) return std::nullopt;
  const std::uint64_t sample = std::uint64_t(d.c) * std::uint64_t(d.h) * std::uint64_t(d.w);
  if (sample > std::uint64_t(kMaxImagePixels) * 3 || r.left != std::uint64_t(n) * (1 + sample))
    return std::nullopt;
  d.labels.assign(r.p, r.p + n);
  d.images.assign(r.p + n, r.p + r.left);
  for (std::uint8_t label : d.labels)
    if (label >= d.classes) return std::nullopt;
  d.source = listing.root;
  d.class_names = listing.class_names;
  return out;
}

void write_folder_cache(const fs::path& path, const FolderListing& listing, const FolderSpec& spec,
                        const CachedFolder& cached) {
  const Dataset& d = cached.data;
  Writer w;
  w.out.append(kMagic, 8);
  w.value(kVersion);
  w.value(listing_hash(listing));
  for (int i = 0; i < 5; ++i) w.value(settings_of(spec, i));
  w.value(std::int32_t(d.c));
  w.value(std::int32_t(d.h));
  w.value(std::int32_t(d.w));
  w.value(std::int32_t(d.classes));
  w.value(std::int64_t(d.labels.size()));
  w.value(static_cast<std::uint32_t>(listing.class_names.size()));
  for (const std::string& name : listing.class_names) w.text(name);
  w.value(static_cast<std::uint64_t>(listing.files.size()));
  for (std::size_t i = 0; i < listing.files.size(); ++i) {
    const FolderFile& f = listing.files[i];
    w.text(f.relative);
    w.value(f.size);
    w.value(f.mtime_ns);
    w.value(std::int32_t(f.label));
    w.text(cached.skip_reasons[i]);
  }
  std::uint32_t crc = crc_of(0, w.out.data(), w.out.size());
  crc = crc_of(crc, d.labels.data(), d.labels.size());
  crc = crc_of(crc, d.images.data(), d.images.size());

  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  if (ec) throw Error("cannot create " + path.parent_path().string() + ": " + ec.message());
  std::random_device random;
  const fs::path temp =
      path.string() + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(random());
  Fd file{open_own_file(temp, O_WRONLY | O_CREAT | O_EXCL, 0644)};
  if (file.fd == -1) throw Error("cannot create " + temp.string() + ": " + std::strerror(errno));
  try {
    write_all(file.fd, w.out.data(), w.out.size(), temp);
    write_all(file.fd, d.labels.data(), d.labels.size(), temp);
    write_all(file.fd, d.images.data(), d.images.size(), temp);
    write_all(file.fd, &crc, sizeof crc, temp);
    if (::close(std::exchange(file.fd, -1)) != 0)
      throw Error("cannot write " + temp.string() + ": " + std::strerror(errno));
    if (::rename(temp.c_str(), path.c_str()) != 0)
      throw Error("cannot rename " + temp.string() + " to " + path.string() + ": " +
                  std::strerror(errno));
  } catch (...) {
    ::unlink(temp.c_str());
    throw;
  }
}

}  // namespace sweep::trainer
