/*
 * output_file.cpp — the database guard, the "-" and the pipes of export's and report's -o
 * (output_file.h).
 */
#include "sweep/cli/output_file.h"

#include <array>
#include <cstring>
#include <fstream>
#include <iostream>

#include "common/check.h"
#include "reports/report.h"

namespace sweep::cli {
namespace fs = std::filesystem;

namespace {

// The files SQLite keeps beside a database named NAME: NAME-wal, NAME-shm, NAME-journal.
constexpr std::array<std::string_view, 3> kSideSuffixes = {"-wal", "-shm", "-journal"};

// Does the file at `path` (a link followed) start as every SQLite database does?
bool is_sqlite_database(const fs::path& path) {
  constexpr char kMagic[16] = "SQLite format 3";  // and its '\0'
  std::ifstream in(path, std::ios::binary);
  char head[16] = {};
  return in.read(head, sizeof head) && std::memcmp(head, kMagic, sizeof head) == 0;
}

// The same file, or the same place when one of them does not exist yet.
bool same_place(const fs::path& a, const fs::path& b) {
  std::error_code ec;
  if (fs::equivalent(a, b, ec) && !ec) return true;
  const fs::path ca = fs::weakly_canonical(fs::absolute(a), ec);
  if (ec) return false;
  const fs::path cb = fs::weakly_canonical(fs::absolute(b), ec);
  return !ec && ca == cb;
}

}  // namespace

std::string output_path_problem(const std::string& path) {
  return path.empty() ? "'': expected a file, or - for standard output, not an empty value" : "";
}

std::optional<std::string> database_at(const fs::path& path, const fs::path& own_database) {
  if (!own_database.empty()) {
    if (same_place(path, own_database)) return "it is this sweep's own database";
    for (const std::string_view suffix : kSideSuffixes)
      if (same_place(path, own_database.string() + std::string(suffix)))
        return "it is the " + std::string(suffix.substr(1)) + " file of this sweep's own database";
  }
  std::error_code ec;
  if (fs::is_regular_file(path, ec) && is_sqlite_database(path)) return "it is an SQLite database";
  const std::string name = path.filename().string();
  for (const std::string_view suffix : kSideSuffixes)
    if (name.size() > suffix.size() && name.ends_with(suffix)) {
      const fs::path database = path.parent_path() / name.substr(0, name.size() - suffix.size());
      if (fs::is_regular_file(database, ec) && is_sqlite_database(database))
        return "it is the " + std::string(suffix.substr(1)) + " file of the SQLite database " +
               database.string();
    }
  return std::nullopt;
}

void refuse_database_output(const std::string& path, const fs::path& own_database, bool force) {
  if (force || path == kStandardOutput) return;
  if (const auto why = database_at(path, own_database))
    throw Error("refusing to write " + path + ": " + *why +
                ", which the output would destroy; give another file, or --force to write it "
                "anyway");
}

bool write_output(const std::string& path, std::string_view text) {
  if (path == kStandardOutput) {
    std::cout << text;
    return false;
  }
  std::cout.flush();  // what this process printed before comes first on a shared stream
  reports::write_file_atomically(path, text);
  return true;
}

}  // namespace sweep::cli
