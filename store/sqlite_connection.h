/*
 * sqlite_connection.h — RAII for sqlite3* / sqlite3_stmt*, and transactions that survive
 * contention.
 *
 * The one non-obvious decision: "database is locked" is handled here, once, by retrying the WHOLE
 * transaction. busy_timeout already makes SQLite wait for most locks, but SQLite still returns
 * SQLITE_BUSY at once in a few cases (WAL recovery, switching a fresh file to WAL while another
 * process does the same, a read snapshot that cannot be upgraded). A statement that failed with
 * SQLITE_BUSY throws DatabaseBusy; write()/read() roll back and run the callable again with a
 * jittered backoff until a deadline, after which the user gets a sweep::Error naming the file. So a
 * callable given to write()/read() must build its result inside itself: it may run more than once.
 *
 * Internal to store/: nothing outside store/ includes this header (it pulls in sqlite3.h).
 * Not thread-safe: Store serialises every use of a Connection with its own mutex.
 */
#pragma once

#include <sqlite3.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>

#include "common/check.h"

namespace sweep::store_detail {

// A CallError already told in words (throw_in_words): rethrown as it is.
class InWords : public CallError {
 public:
  using CallError::CallError;
};

// Any other failed SQLite call, with SQLite's result code and the OS error behind it, taken when
// it failed (a ROLLBACK afterwards resets what the connection reports).
class SqliteFailure : public CallError {
 public:
  SqliteFailure(const CallError& e, int code, int system_errno)
      : CallError(e), code_(code), system_errno_(system_errno) {}
  int code() const noexcept { return code_; }  // extended result code (SQLITE_IOERR_WRITE, ...)
  int system_errno() const noexcept { return system_errno_; }

 private:
  int code_, system_errno_;
};

// SQLite said SQLITE_BUSY or SQLITE_LOCKED: the caller may retry the whole transaction.
class DatabaseBusy : public CallError {
 public:
  explicit DatabaseBusy(const CallError& e) : CallError(e) {}
};

// Rethrows `e` as DatabaseBusy when the connection's last error was BUSY/LOCKED, else as a
// SqliteFailure carrying the codes.
[[noreturn]] void rethrow_classified(sqlite3* db, const CallError& e);

}  // namespace sweep::store_detail

// SWEEP_CHECK_SQLITE, plus the BUSY/LOCKED distinction the retry loops need.
#define SWEEP_SQLITE_CALL(db, call)                            \
  do {                                                         \
    try {                                                      \
      SWEEP_CHECK_SQLITE(db, call);                            \
    } catch (const ::sweep::CallError& sweep_e_) {             \
      ::sweep::store_detail::rethrow_classified(db, sweep_e_); \
    }                                                          \
  } while (0)

namespace sweep::store_detail {

struct DbCloser {
  void operator()(sqlite3* db) const noexcept;
};
struct StmtFinalizer {
  void operator()(sqlite3_stmt* stmt) const noexcept;
};

// One prepared statement. Parameters are 1-based as in SQLite; text is copied at bind time
// (SQLITE_TRANSIENT), so a temporary string may be bound.
class Statement {
 public:
  Statement(sqlite3* db, std::string_view sql);

  Statement& bind(int index, std::nullptr_t);
  Statement& bind(int index, std::int64_t value);
  Statement& bind(int index, int value) { return bind(index, static_cast<std::int64_t>(value)); }
  Statement& bind(int index, double value);  // NaN would become NULL: callers split kinds first
  Statement& bind(int index, std::string_view value);
  Statement& bind(int index, const std::string& value) {
    return bind(index, std::string_view(value));
  }
  Statement& bind(int index, const char* value) { return bind(index, std::string_view(value)); }
  template <class T>
  Statement& bind(int index, const std::optional<T>& value) {
    return value ? bind(index, *value) : bind(index, nullptr);
  }
  // Binds the arguments to parameters 1..N in order.
  template <class... Args>
  Statement& bind_all(const Args&... args) {
    int index = 0;
    (bind(++index, args), ...);
    return *this;
  }

  bool step();            // true: a row is ready; false: done
  void reset() noexcept;  // ready to run again, bindings cleared

  bool is_null(int col) const;
  std::int64_t int64(int col) const;
  double real(int col) const;
  std::optional<double> optional_real(int col) const;
  std::optional<std::int64_t> optional_int64(int col) const;
  std::string text(int col) const;  // NULL reads as ""

 private:
  sqlite3* db_;
  std::unique_ptr<sqlite3_stmt, StmtFinalizer> stmt_;
};

// A statement borrowed from the cache, reset when the borrow ends (so the next user starts clean
// and the statement releases its read snapshot).
class StatementUse {
 public:
  explicit StatementUse(Statement& s) : s_(&s) {}
  StatementUse(const StatementUse&) = delete;
  StatementUse& operator=(const StatementUse&) = delete;
  ~StatementUse() { s_->reset(); }
  Statement* operator->() const { return s_; }
  Statement& operator*() const { return *s_; }

 private:
  Statement* s_;
};

struct ConnectionOptions {
  bool read_only = false;
  // Read the file as it is, without locks, journals or the -wal/-shm files (SQLite's immutable
  // URI parameter): looking at a file that may not be ours without changing a byte of it, and
  // reading a finished sweep on a read-only file system. Implies read_only.
  bool immutable = false;
  int busy_timeout_ms = 10'000;                   // SQLite's own wait for a lock
  std::chrono::milliseconds retry_limit{60'000};  // then our retry loop gives up
  std::string vfs{};                              // "" = SQLite's default (tests inject faults)
};

// A failed SQLite call told as what it means for the file: "cannot write PATH: the disk is full
// or a file-size limit (ulimit -f) was reached". The call, its SQL and our source line stay in
// debug_text().
[[noreturn]] void throw_in_words(sqlite3* db, const std::filesystem::path& path,
                                 const CallError& e);

class Connection {
 public:
  Connection(std::filesystem::path path, ConnectionOptions options);

  sqlite3* raw() const { return db_.get(); }
  const std::filesystem::path& path() const { return path_; }
  bool read_only() const { return options_.read_only; }

  // A cached prepared statement, reset when the returned borrow goes out of scope.
  StatementUse statement(std::string_view sql);
  // Runs SQL without results (may hold several statements: DDL).
  void exec(const char* sql);
  // Changed rows of the last INSERT/UPDATE/DELETE.
  std::int64_t changes() const;
  std::int64_t last_insert_rowid() const;

  // Runs fn inside BEGIN IMMEDIATE ... COMMIT, rolling back if it throws; retried on BUSY.
  template <class Fn>
  auto write(Fn&& fn) -> std::invoke_result_t<Fn&> {
    return with_retry([&] { return in_transaction("BEGIN IMMEDIATE", fn); });
  }
  // Runs fn inside BEGIN ... COMMIT: every query in fn sees one snapshot; retried on BUSY.
  template <class Fn>
  auto read(Fn&& fn) -> std::invoke_result_t<Fn&> {
    return with_retry([&] { return in_transaction("BEGIN", fn); });
  }
  // Retries fn (which must be safe to run again) while it throws DatabaseBusy.
  // Other SQLite failures are thrown in words (throw_in_words).
  template <class Fn>
  auto with_retry(Fn&& fn) -> std::invoke_result_t<Fn&> {
    RetryClock clock(options_.retry_limit);
    for (;;) {
      try {
        return fn();
      } catch (const DatabaseBusy& e) {
        clock.wait_or_give_up(path_, e);
      } catch (const InWords&) {
        throw;
      } catch (const CallError& e) {
        throw_in_words(raw(), path_, e);
      }
    }
  }

 private:
  // Commits on success; the destructor rolls back whatever was not committed (exception-safe).
  class TransactionGuard {
   public:
    TransactionGuard(Connection& c, const char* begin_sql);
    TransactionGuard(const TransactionGuard&) = delete;
    TransactionGuard& operator=(const TransactionGuard&) = delete;
    ~TransactionGuard();
    void commit();

   private:
    Connection& c_;
    bool open_ = true;
  };

  class RetryClock {
   public:
    explicit RetryClock(std::chrono::milliseconds limit);
    void wait_or_give_up(const std::filesystem::path& path, const DatabaseBusy& e);

   private:
    std::chrono::steady_clock::time_point deadline_;
    std::chrono::microseconds backoff_{500};
  };

  template <class Fn>
  auto in_transaction(const char* begin_sql, Fn& fn) -> std::invoke_result_t<Fn&> {
    TransactionGuard txn(*this, begin_sql);
    if constexpr (std::is_void_v<std::invoke_result_t<Fn&>>) {
      fn();
      txn.commit();
    } else {
      auto result = fn();
      txn.commit();
      return result;
    }
  }

  std::filesystem::path path_;
  ConnectionOptions options_;
  std::unique_ptr<sqlite3, DbCloser> db_;
  std::unordered_map<std::string, std::unique_ptr<Statement>> statements_;
};

}  // namespace sweep::store_detail
