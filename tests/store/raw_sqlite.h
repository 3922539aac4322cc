/*
 * raw_sqlite.h — a bare SQLite handle for tests that must build or inspect a file behind the
 * store's back (foreign databases, old schemas, damaged version rows).
 */
#pragma once

#include <sqlite3.h>

#include <filesystem>
#include <string>

#include "common/check.h"

namespace sweep::test {

class RawDb {
 public:
  explicit RawDb(const std::filesystem::path& path) {
    const int rc = sqlite3_open(path.c_str(), &db_);
    SWEEP_CHECK_SQLITE(db_, rc);
  }
  ~RawDb() { sqlite3_close_v2(db_); }
  RawDb(const RawDb&) = delete;
  RawDb& operator=(const RawDb&) = delete;

  void exec(const std::string& sql) {
    SWEEP_CHECK_SQLITE(db_, sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, nullptr));
  }
  // The first column of the first row as text ("" when there is no row).
  std::string query_text(const std::string& sql) {
    sqlite3_stmt* stmt = nullptr;
    SWEEP_CHECK_SQLITE(db_, sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt, nullptr));
    std::string out;
    const int rc = sqlite3_step(stmt);
    if (rc == SQLITE_ROW && sqlite3_column_text(stmt, 0) != nullptr)
      out = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
    sqlite3_finalize(stmt);
    SWEEP_CHECK_SQLITE(db_, rc);
    return out;
  }
  sqlite3* get() const { return db_; }

 private:
  sqlite3* db_ = nullptr;
};

}  // namespace sweep::test
