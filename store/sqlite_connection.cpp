/*
 * sqlite_connection.cpp — the thin layer over the SQLite C API.
 *
 * Statements are prepared once per connection and cached by their SQL text: the store runs the
 * same few dozen statements millions of times, and preparing is most of the cost of a small one.
 * The retry backoff is jittered per process so that eight workers that collided once do not
 * collide again in lock step.
 */
#include "store/sqlite_connection.h"

#include <sys/resource.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

namespace sweep::store_detail {

void rethrow_classified(sqlite3* db, const CallError& e) {
  const int code = db ? sqlite3_errcode(db) & 0xff : 0;
  if (code == SQLITE_BUSY || code == SQLITE_LOCKED) throw DatabaseBusy(e);
  throw SqliteFailure(e, db ? sqlite3_extended_errcode(db) : 0, db ? sqlite3_system_errno(db) : 0);
}

void DbCloser::operator()(sqlite3* db) const noexcept {
  // sqlite3_close_v2 defers the close if a statement is still alive; all of ours are finalised
  // first (the statement cache is destroyed before the handle), so this closes at once.
  SWEEP_LOG_ON_ERROR(sqlite3_close_v2(db) == SQLITE_OK, "sqlite3_close_v2");
}

void StmtFinalizer::operator()(sqlite3_stmt* stmt) const noexcept {
  // sqlite3_finalize repeats the statement's last error; that error was already reported.
  sqlite3_finalize(stmt);
}

// ---- Statement ------------------------------------------------------------------------------

Statement::Statement(sqlite3* db, std::string_view sql) : db_(db) {
  sqlite3_stmt* raw = nullptr;
  SWEEP_SQLITE_CALL(db_, sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()),
                                            SQLITE_PREPARE_PERSISTENT, &raw, nullptr));
  stmt_.reset(raw);
  if (!stmt_) throw Error("empty SQL statement: '" + std::string(sql) + "'");
}

Statement& Statement::bind(int index, std::nullptr_t) {
  SWEEP_SQLITE_CALL(db_, sqlite3_bind_null(stmt_.get(), index));
  return *this;
}
Statement& Statement::bind(int index, std::int64_t value) {
  SWEEP_SQLITE_CALL(db_, sqlite3_bind_int64(stmt_.get(), index, value));
  return *this;
}
Statement& Statement::bind(int index, double value) {
  SWEEP_SQLITE_CALL(db_, sqlite3_bind_double(stmt_.get(), index, value));
  return *this;
}
Statement& Statement::bind(int index, std::string_view value) {
  // A default string_view has a null data(), which SQLite would store as NULL, not as "".
  const char* text = value.data() != nullptr ? value.data() : "";
  SWEEP_SQLITE_CALL(db_, sqlite3_bind_text64(stmt_.get(), index, text, value.size(),
                                             SQLITE_TRANSIENT, SQLITE_UTF8));
  return *this;
}

bool Statement::step() {
  int rc = SQLITE_OK;
  try {
    SWEEP_SQLITE_CALL(db_, rc = sqlite3_step(stmt_.get()));
  } catch (const DatabaseBusy&) {
    throw;  // retried by the caller's transaction loop: no need to dress it up
  } catch (const SqliteFailure& e) {
    // Every statement fails at this one line, so name the statement: that is what tells which
    // write broke (e.g. which constraint of which table).
    std::string sql = sqlite3_sql(stmt_.get());
    if (sql.size() > 160) sql = sql.substr(0, 160) + "...";
    throw SqliteFailure(
        CallError(e.call(), short_file(__FILE__), __LINE__, e.detail() + " in: " + sql), e.code(),
        e.system_errno());
  }
  return rc == SQLITE_ROW;
}

void Statement::reset() noexcept {
  // sqlite3_reset repeats the last step's error, which was already thrown; ignore it here.
  sqlite3_reset(stmt_.get());
  sqlite3_clear_bindings(stmt_.get());
}

bool Statement::is_null(int col) const {
  return sqlite3_column_type(stmt_.get(), col) == SQLITE_NULL;
}
std::int64_t Statement::int64(int col) const { return sqlite3_column_int64(stmt_.get(), col); }
double Statement::real(int col) const { return sqlite3_column_double(stmt_.get(), col); }
std::optional<double> Statement::optional_real(int col) const {
  if (is_null(col)) return std::nullopt;
  return real(col);
}
std::optional<std::int64_t> Statement::optional_int64(int col) const {
  if (is_null(col)) return std::nullopt;
  return int64(col);
}
std::string Statement::text(int col) const {
  const auto* p = sqlite3_column_text(stmt_.get(), col);
  if (p == nullptr) return {};
  return std::string(reinterpret_cast<const char*>(p),
                     static_cast<std::size_t>(sqlite3_column_bytes(stmt_.get(), col)));
}

// ---- Connection -----------------------------------------------------------------------------

namespace {

// "file:" plus the path with the characters a URI gives meaning to escaped (RFC 3986 / SQLite's
// URI rules: '?', '#' and '%' would end or alter the path).
std::string file_uri(const std::filesystem::path& path) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string uri = "file:";
  for (const unsigned char c : std::filesystem::absolute(path).string()) {
    if (c == '?' || c == '#' || c == '%' || c <= 0x20 || c >= 0x7f) {
      uri += '%';
      uri += kHex[c >> 4];
      uri += kHex[c & 0xf];
    } else {
      uri += static_cast<char>(c);
    }
  }
  return uri;
}

// SQLite counts every allocation under a global mutex for sqlite3_memory_used(), which sweep
// never asks for; that mutex was a tenth of the metric insert time. The setting is process-wide
// and only possible before SQLite initialises: if someone else initialised it first, keep theirs.
void disable_memory_statistics_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    const int rc = sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
    if (rc != SQLITE_MISUSE) SWEEP_CHECK_SQLITE(nullptr, rc);
  });
}
}  // namespace

Connection::Connection(std::filesystem::path path, ConnectionOptions options)
    : path_(std::move(path)), options_(std::move(options)) {
  disable_memory_statistics_once();
  if (options_.immutable) options_.read_only = true;
  // NOMUTEX: Store serialises all use of a connection itself, so SQLite's own mutex is redundant.
  int flags =
      (options_.read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) |
      SQLITE_OPEN_NOMUTEX;
  std::string name = path_.string();
  if (options_.immutable) {
    flags |= SQLITE_OPEN_URI;
    name = file_uri(path_) + "?immutable=1";
  }
  sqlite3* raw = nullptr;
  const int rc = sqlite3_open_v2(name.c_str(), &raw, flags,
                                 options_.vfs.empty() ? nullptr : options_.vfs.c_str());
  db_.reset(raw);  // owned even when the open failed: the handle must still be closed
  SWEEP_CHECK_SQLITE(raw, rc);
  SWEEP_CHECK_SQLITE(raw, sqlite3_busy_timeout(raw, options_.busy_timeout_ms));
  SWEEP_CHECK_SQLITE(raw, sqlite3_extended_result_codes(raw, 0));
}

StatementUse Connection::statement(std::string_view sql) {
  auto it = statements_.find(std::string(sql));
  if (it == statements_.end())
    it = statements_.emplace(std::string(sql), std::make_unique<Statement>(raw(), sql)).first;
  return StatementUse(*it->second);
}

void Connection::exec(const char* sql) {
  SWEEP_SQLITE_CALL(raw(), sqlite3_exec(raw(), sql, nullptr, nullptr, nullptr));
}

std::int64_t Connection::changes() const { return sqlite3_changes64(raw()); }
std::int64_t Connection::last_insert_rowid() const { return sqlite3_last_insert_rowid(raw()); }

Connection::TransactionGuard::TransactionGuard(Connection& c, const char* begin_sql) : c_(c) {
  c_.exec(begin_sql);
}

void Connection::TransactionGuard::commit() {
  c_.exec("COMMIT");
  open_ = false;
}

Connection::TransactionGuard::~TransactionGuard() {
  if (!open_) return;
  // SQLite rolls back by itself after some errors (SQLITE_FULL, SQLITE_IOERR...): then there is
  // nothing left to roll back and ROLLBACK would only fail.
  if (sqlite3_get_autocommit(c_.raw()) != 0) return;
  SWEEP_LOG_ON_ERROR(sqlite3_exec(c_.raw(), "ROLLBACK", nullptr, nullptr, nullptr) == SQLITE_OK,
                     "ROLLBACK");
}

Connection::RetryClock::RetryClock(std::chrono::milliseconds limit)
    : deadline_(std::chrono::steady_clock::now() + limit) {}

void Connection::RetryClock::wait_or_give_up(const std::filesystem::path& path,
                                             const DatabaseBusy& e) {
  if (std::chrono::steady_clock::now() >= deadline_)
    throw Error("the sweep database " + path.string() +
                " stayed locked by another process past the retry limit (" + e.detail() +
                "); is a process stuck holding a write transaction, or is the file on a network "
                "filesystem (not supported)?");
  thread_local std::minstd_rand jitter(
      static_cast<unsigned>(::getpid()) * 2654435761u +
      static_cast<unsigned>(std::hash<std::thread::id>{}(std::this_thread::get_id())));
  const auto max_us = backoff_.count();
  std::this_thread::sleep_for(std::chrono::microseconds(max_us / 2 + jitter() % (max_us / 2 + 1)));
  backoff_ = std::min(backoff_ * 2, std::chrono::microseconds(50'000));
}

namespace {

// Why a write may have failed, from the process and the disk themselves (SQLite does not always
// keep the OS error): a file-size limit (ulimit -f) or a full disk. "" when neither is seen.
std::string write_failure_cause(const std::filesystem::path& path) {
  std::string cause;
  rlimit limit{};
  if (::getrlimit(RLIMIT_FSIZE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY)
    cause = "this process has a file-size limit (ulimit -f) of " +
            std::to_string(static_cast<unsigned long long>(limit.rlim_cur)) + " bytes";
  struct statvfs disk {};
  const std::filesystem::path dir = path.has_parent_path() ? path.parent_path() : ".";
  if (::statvfs(dir.c_str(), &disk) == 0 &&
      static_cast<unsigned long long>(disk.f_bavail) * disk.f_frsize < (4ull << 20))
    cause += std::string(cause.empty() ? "" : ", and ") + "the disk is full";
  return cause;
}

// Where SQLite puts its temporary files on Unix (a sort or an index too large for memory): the
// first writable directory of these, as its unix VFS looks for one.
std::filesystem::path sqlite_temp_directory() {
  std::vector<const char*> candidates = {sqlite3_temp_directory,
                                         std::getenv("SQLITE_TMPDIR"),
                                         std::getenv("TMPDIR"),
                                         "/var/tmp",
                                         "/usr/tmp",
                                         "/tmp"};
  for (const char* dir : candidates)
    if (dir && *dir && ::access(dir, W_OK | X_OK) == 0) return dir;
  return ".";
}

}  // namespace

[[noreturn]] void throw_in_words(sqlite3* db, const std::filesystem::path& path,
                                 const CallError& e) {
  const auto* failure = dynamic_cast<const SqliteFailure*>(&e);
  const int extended = failure ? failure->code() : db ? sqlite3_extended_errcode(db) : 0;
  const int code = extended & 0xff;
  const int sys = failure ? failure->system_errno() : db ? sqlite3_system_errno(db) : 0;
  const std::string file = path.string();
  const bool write_failed = code == SQLITE_FULL || extended == SQLITE_IOERR_WRITE ||
                            extended == SQLITE_IOERR_FSYNC || extended == SQLITE_IOERR_TRUNCATE ||
                            sys == ENOSPC || sys == EDQUOT || sys == EFBIG;
  std::string text;
  // A connection that cannot write its database writes only SQLite's temporary files: a failed
  // write there is about that file, not the database, which stays as it was.
  if (write_failed && db && sqlite3_db_readonly(db, "main") == 1) {
    const std::filesystem::path temp = sqlite_temp_directory();
    std::string cause = write_failure_cause(temp / "sqlite-temporary");
    if (cause.empty()) cause = sys ? std::string(std::strerror(sys)) : "the disk is full";
    text = "cannot write SQLite's temporary file in " + temp.string() + " (for a sort too large " +
           "for memory) while reading " + file + ": " + cause +
           "; fix that, or point SQLITE_TMPDIR at a directory with room, and run the command "
           "again (" +
           file + " is only read)";
  } else if (write_failed) {
    std::string cause = write_failure_cause(path);
    if (cause.empty())
      cause = sys ? std::string(std::strerror(sys))
                  : "the disk is full, a file-size limit (ulimit -f) was reached, or the disk "
                    "failed";
    text = "cannot write " + file + ": " + cause +
           "; fix that and run the command again (the database is left as it was before this "
           "write)";
  } else if (code == SQLITE_READONLY || sys == EROFS || sys == EACCES || sys == EPERM) {
    text = "cannot write " + file + ": the file or its directory is read-only (" +
           std::string(sys ? std::strerror(sys) : sqlite3_errstr(code)) +
           "); give sweep a writable place (--out DIR or --db PATH)";
  } else if (code == SQLITE_CORRUPT || code == SQLITE_NOTADB) {
    text = file + " is damaged (" + std::string(sqlite3_errstr(code)) +
           "): it cannot be read as a sweep store; keep a copy and start the sweep anew "
           "elsewhere (--out DIR)";
  } else if (code == SQLITE_IOERR) {
    text = "cannot read or write " + file + ": I/O error" +
           (sys ? " (" + std::string(std::strerror(sys)) + ")" : std::string()) +
           "; check the disk, then run the command again";
  } else if (code == SQLITE_CANTOPEN) {
    text = "cannot open " + file + " or its -wal/-shm files" +
           (sys ? " (" + std::string(std::strerror(sys)) + ")" : std::string()) +
           "; check that the directory exists and can be written";
  } else {
    text = "the sweep database " + file + ": " + e.detail().substr(0, e.detail().find(" in: "));
  }
  throw InWords(text, e);
}

}  // namespace sweep::store_detail
