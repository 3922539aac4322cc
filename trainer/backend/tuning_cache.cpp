/*
 * tuning_cache.cpp — see tuning_cache.h.
 */
#include "trainer/backend/tuning_cache.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "common/sweep_home.h"

namespace sweep::trainer {

namespace {

namespace fs = std::filesystem;

// A file larger than this, or lines past this many, are not read: a cache holds a few lines a
// shape, and a huge file is not one we wrote.
constexpr std::uintmax_t kMaxFileBytes = 4u << 20;
constexpr std::size_t kMaxLines = 20000;

std::uint64_t fnv1a(std::string_view text) {
  std::uint64_t h = 14695981039346656037ull;
  for (const char c : text) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ull;
  }
  return h;
}

bool valid_kind(std::string_view kind) {
  if (kind.empty()) return false;
  for (const char c : kind)
    if (!((c >= 'a' && c <= 'z') || c == '_')) return false;
  return true;
}

// Comma-separated numbers, every character used; false for anything else.
template <class T, class Parse>
bool parse_list(const std::string& text, std::vector<T>& out, Parse parse) {
  out.clear();
  if (text.empty()) return false;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string item = text.substr(start, comma - start);
    if (item.empty()) return false;
    char* end = nullptr;
    errno = 0;
    const T value = parse(item.c_str(), &end);
    if (errno != 0 || end != item.c_str() + item.size()) return false;
    out.push_back(value);
    start = comma + 1;
  }
  return true;
}

using Entries =
    std::map<std::tuple<std::uint64_t, std::string, std::vector<long long>>, std::vector<double>>;

// The entries of `file` that parse; nothing when it is missing, unreadable or too large.
void read_entries(const fs::path& file, Entries& into) {
  std::error_code ec;
  const std::uintmax_t size = fs::file_size(file, ec);
  if (ec || size > kMaxFileBytes) return;
  std::ifstream in(file);
  std::string line;
  std::size_t lines = 0;
  while (lines++ < kMaxLines && std::getline(in, line)) {
    std::string fields[4];
    std::istringstream split(line);
    std::size_t n = 0;
    while (n < 4 && std::getline(split, fields[n], '\t')) ++n;
    std::string rest;
    if (n != 4 || std::getline(split, rest) || fields[0].size() != 16 || !valid_kind(fields[1]))
      continue;
    char* end = nullptr;
    const std::uint64_t fingerprint = std::strtoull(fields[0].c_str(), &end, 16);
    if (end != fields[0].c_str() + 16) continue;
    std::vector<long long> key;
    std::vector<double> value;
    if (!parse_list(fields[2], key, [](const char* s, char** e) { return std::strtoll(s, e, 10); }))
      continue;
    if (!parse_list(fields[3], value, [](const char* s, char** e) { return std::strtod(s, e); }))
      continue;
    bool numbers = true;
    for (const double v : value) numbers = numbers && !std::isnan(v);
    if (numbers) into[{fingerprint, fields[1], std::move(key)}] = std::move(value);
  }
}

std::string line_of(const Entries::value_type& entry) {
  const auto& [fingerprint, kind, key] = entry.first;
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(fingerprint));
  std::string line = hex;
  line += '\t';
  line += kind;
  for (std::size_t i = 0; i < key.size(); ++i) {
    line += i ? ',' : '\t';
    line += std::to_string(key[i]);
  }
  for (std::size_t i = 0; i < entry.second.size(); ++i) {
    char number[32];
    std::snprintf(number, sizeof number, "%.17g", entry.second[i]);
    line += i ? ',' : '\t';
    line += number;
  }
  line += '\n';
  return line;
}

// A file descriptor closed on scope exit (its flock with it).
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

TuningCache::TuningCache(fs::path file) : file_(std::move(file)) {}

void TuningCache::load_once() {
  if (loaded_) return;
  loaded_ = true;
  if (!file_.empty()) read_entries(file_, entries_);
}

std::optional<std::vector<double>> TuningCache::find(std::string_view fingerprint,
                                                     std::string_view kind,
                                                     const std::vector<long long>& key) {
  std::lock_guard lock(mutex_);
  load_once();
  const auto it = entries_.find({fnv1a(fingerprint), std::string(kind), key});
  if (it == entries_.end()) return std::nullopt;
  return it->second;
}

std::size_t TuningCache::count(std::string_view fingerprint, std::string_view kind) {
  std::lock_guard lock(mutex_);
  load_once();
  const std::uint64_t f = fnv1a(fingerprint);
  std::size_t n = 0;
  for (const auto& [key, value] : entries_)
    n += std::get<0>(key) == f && std::get<1>(key) == kind ? 1 : 0;
  return n;
}

void TuningCache::put(std::string_view fingerprint, std::string_view kind,
                      const std::vector<long long>& key, const std::vector<double>& value) {
  if (!valid_kind(kind)) return;  // a caller's slip must not write a line readers would drop
  for (const double v : value)
    if (std::isnan(v)) return;
  std::lock_guard lock(mutex_);
  load_once();
  const Key k{fnv1a(fingerprint), std::string(kind), key};
  entries_[k] = value;
  if (!file_.empty()) write(k, value);
}

void TuningCache::write(const Key& key, const std::vector<double>& value) {
  static std::atomic<unsigned> next_temp{0};
  std::string why;
  std::error_code ec;
  fs::create_directories(file_.parent_path(), ec);
  const fs::path lock_path = file_.string() + ".lock";
  const fs::path temp = file_.string() + ".tmp." + std::to_string(::getpid()) + "." +
                        std::to_string(next_temp.fetch_add(1));
  // Never through a link: O_CREAT would make (and the temporary's write would fill) a file that is
  // not ours wherever a link planted at these names pointed.
  Fd lock{::open(lock_path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644)};
  if (lock.fd < 0) {
    why = lock_path.string() + ": " + std::strerror(errno);
  } else if (::flock(lock.fd, LOCK_EX) != 0) {
    why = lock_path.string() + ": " + std::strerror(errno);
  } else {
    // What other processes wrote since, with ours over it.
    Entries all;
    read_entries(file_, all);
    all[key] = value;
    std::string text;
    for (const auto& entry : all) text += line_of(entry);
    bool made = false;
    {
      Fd out{::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644)};
      made = out.fd >= 0;
      for (std::size_t done = 0; made && why.empty() && done < text.size();) {
        const ssize_t n = ::write(out.fd, text.data() + done, text.size() - done);
        if (n > 0)
          done += std::size_t(n);
        else if (n < 0 && errno != EINTR)
          why = temp.string() + ": " + std::strerror(errno);
      }
      if (!made) why = temp.string() + ": " + std::strerror(errno);
    }
    if (why.empty() && std::rename(temp.c_str(), file_.c_str()) != 0)
      why = file_.string() + ": " + std::strerror(errno);
    if (!why.empty() && made) fs::remove(temp, ec);  // ours only: O_EXCL made it
  }
  if (!why.empty() && !warned_) {
    warned_ = true;
    std::fprintf(
        stderr,
        "sweep: the tuning cache could not be written (%s); timed kernel choices are "
        "kept for this process only (set SWEEP_TUNING_CACHE to a writable file's path, or to "
        "nothing to keep none)\n",
        why.c_str());
  }
}

TuningCache& tuning_cache() {
  static TuningCache cache([] {
    if (const char* file = std::getenv("SWEEP_TUNING_CACHE")) return fs::path(file);
    const std::optional<fs::path> home = sweep_home();
    return home ? *home / "tuning.tsv" : fs::path();
  }());
  return cache;
}

}  // namespace sweep::trainer
