/*
 * store_open.cpp — opening a store: recognise the file, open it, configure it, migrate it.
 *
 * The decision: a file is recognised before anything can write to it. Switching to WAL, the
 * migrations and application_id all write, and even opening a database read-write rolls back a
 * hot journal or checkpoints a WAL on close. So another program's file is looked at first with
 * SQLite's `immutable` mode (no locks, no journal, no -wal/-shm files: not one byte changes), and
 * refused then; only a file that is fresh or already a sweep store is opened for writing.
 * Every "this is not your file" case becomes one sweep::Error naming the path and what to do.
 */
#include <fstream>
#include <system_error>

#include "store/schema.h"
#include "store/store_impl.h"

namespace sweep {

namespace fs = std::filesystem;
using store_detail::Connection;
using store_detail::ConnectionOptions;

namespace {

constexpr char kSqliteMagic[16] = {'S', 'Q', 'L', 'i', 't', 'e', ' ', 'f',
                                   'o', 'r', 'm', 'a', 't', ' ', '3', '\0'};

ConnectionOptions connection_options(const StoreOptions& options) {
  ConnectionOptions c;
  c.read_only = options.read_only;
  c.busy_timeout_ms = options.busy_timeout_ms;
  c.retry_limit = options.retry_limit;
  c.vfs = options.vfs;
  return c;
}

std::uintmax_t size_of(const fs::path& path) {
  std::error_code ec;
  const auto size = fs::file_size(path, ec);
  return ec ? 0 : size;
}

std::string not_a_database(const fs::path& path) {
  return path.string() +
         " is not a SQLite database, so not a sweep store; give sweep a path of its own, e.g. "
         "runs/NAME/sweep.db";
}

// The file's first bytes are SQLite's magic (read with plain file I/O: no SQLite involved).
bool has_sqlite_magic(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  char head[sizeof kSqliteMagic] = {};
  in.read(head, sizeof head);
  return in.gcount() == sizeof head && std::equal(head, head + sizeof head, kSqliteMagic);
}

// Checks what `path` is before anything may write to it: a directory, not SQLite, another
// program's database or a newer sweep's throw here. Fresh files (missing, 0 bytes, no tables)
// and sweep stores pass.
void recognise(const fs::path& path, const StoreOptions& options) {
  std::error_code ec;
  if (fs::is_directory(path, ec))
    throw Error(path.string() + " is a directory, not a sweep database; give a file path such as " +
                (path / "sweep.db").string());
  if (!fs::exists(path, ec) || size_of(path) == 0) return;  // fresh: created by migrate
  if (!has_sqlite_magic(path)) throw Error(not_a_database(path));
  ConnectionOptions peek = connection_options(options);
  peek.immutable = true;
  int version = 0;
  try {
    Connection conn(path, peek);
    version = store_detail::inspect(conn, store_detail::migrations());
  } catch (const CallError&) {
    // Unreadable as it lies (damaged, or its tables only in a WAL being written right now):
    // the normal open below decides, with locks.
    return;
  }
  (void)version;
}

// WAL: readers in other processes never block the writer. Not inside a transaction (SQLite
// forbids it); several processes switching a fresh file at once may get SQLITE_BUSY without the
// busy handler, hence the retry.
void enable_wal(Connection& conn) {
  const std::string mode = conn.with_retry([&] {
    auto s = conn.statement("PRAGMA journal_mode = WAL");
    s->step();
    return s->text(0);
  });
  if (mode != "wal")
    throw Error("cannot put the sweep database " + conn.path().string() +
                " in WAL mode (the filesystem gave '" + mode +
                "'): put it on a local disk, not a network filesystem");
}

// A read-only connection to a WAL database needs its -shm file, which a read-only file system
// or directory cannot give. A sweep that ended cleanly has no -wal content left (the last
// connection checkpoints it), so the file alone is the whole store: read it immutable then.
Connection open_read_only(const fs::path& path, const StoreOptions& options) {
  try {
    Connection conn(path, connection_options(options));
    conn.read([&] { conn.statement("SELECT count(*) FROM sqlite_master")->step(); });
    return conn;
  } catch (const CallError& e) {
    if (e.detail().find(sqlite3_errstr(SQLITE_NOTADB)) != std::string::npos)
      throw Error(not_a_database(path));
    const fs::path wal = path.string() + "-wal";
    if (size_of(wal) > 0)
      throw Error("cannot read " + path.string() + ": its directory is read-only and " +
                  wal.string() +
                  " holds changes not yet in the database (the sweep did not end cleanly); "
                  "copy the sweep's directory somewhere writable and read it there");
    ConnectionOptions frozen = connection_options(options);
    frozen.immutable = true;
    return Connection(path, frozen);
  }
}

Connection open_connection(const fs::path& path, const StoreOptions& options) {
  if (options.read_only) {
    std::error_code ec;
    if (fs::is_directory(path, ec))
      throw Error(path.string() + " is a directory, not a sweep database");
    if (!fs::exists(path, ec))
      throw Error("no sweep database at " + path.string() + " (nothing was run there yet?)");
    recognise(path, options);
    return open_read_only(path, options);
  }
  if (path.has_parent_path()) {
    std::error_code ec;
    fs::create_directories(path.parent_path(), ec);
    if (ec)
      throw Error("cannot create the directory " + path.parent_path().string() +
                  " for the sweep database: " + ec.message());
  }
  recognise(path, options);
  return Connection(path, connection_options(options));
}

}  // namespace

Store::Impl::Impl(const fs::path& path, const StoreOptions& options)
    : conn(open_connection(path, options)) {
  try {
    if (!options.read_only) {
      enable_wal(conn);
      conn.exec("PRAGMA synchronous = NORMAL");  // WAL + NORMAL: durable at checkpoints, fast
    }
    conn.exec("PRAGMA foreign_keys = ON");
    schema_version = options.read_only
                         ? store_detail::check_schema(conn, store_detail::migrations())
                         : store_detail::migrate(conn, store_detail::migrations());
  } catch (const store_detail::DatabaseBusy& e) {
    throw Error("the sweep database " + path.string() +
                " stayed locked by another process while it was opened: " + e.detail());
  } catch (const CallError& e) {
    if ((sqlite3_errcode(conn.raw()) & 0xff) == SQLITE_NOTADB) throw Error(not_a_database(path));
    if (dynamic_cast<const store_detail::InWords*>(&e)) throw;
    store_detail::throw_in_words(conn.raw(), path, e);
  }
}

}  // namespace sweep
