// Files that are not ours, given where a store belongs (`--db`, `--queue`): each is refused with
// a message naming it, and not one byte of it (nor of its directory) changes — read-write and
// read-only alike. A directory, an empty file, and a store on a read-only file system too.
#include <gtest/gtest.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <fstream>
#include <map>
#include <random>

#include "raw_sqlite.h"
#include "store/store.h"
#include "store_test_util.h"

namespace sweep {
namespace {

namespace fs = std::filesystem;

std::string bytes_of(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Every file in `dir` with its bytes.
using Snapshot = std::map<std::string, std::string>;
Snapshot snapshot(const fs::path& dir) {
  Snapshot files;
  for (const auto& entry : fs::directory_iterator(dir))
    if (entry.is_regular_file()) files[entry.path().filename().string()] = bytes_of(entry.path());
  return files;
}

// The names of the files that differ between two snapshots ("" when none): never the bytes.
std::string changed_files(const Snapshot& before, const Snapshot& after) {
  std::string changed;
  for (const auto& [name, bytes] : after) {
    const auto it = before.find(name);
    if (it == before.end())
      changed += " " + name + " (new)";
    else if (it->second != bytes)
      changed += " " + name + " (changed)";
  }
  for (const auto& [name, bytes] : before)
    if (!after.count(name)) changed += " " + name + " (removed)";
  return changed;
}

std::string open_error(const fs::path& path, bool read_only) {
  try {
    StoreOptions options;
    options.read_only = read_only;
    Store store(path, options);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

class ForeignFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("sweep_foreign_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Opens `file` both ways, expects `expected` in the message, and the directory untouched.
  void expect_refused_untouched(const fs::path& file, const std::string& expected) {
    for (const bool read_only : {false, true}) {
      const auto before = snapshot(dir_);
      const std::string message = open_error(file, read_only);
      EXPECT_NE(message.find(expected), std::string::npos)
          << (read_only ? "read-only: " : "read-write: ") << message;
      EXPECT_NE(message.find(file.string()), std::string::npos) << message;
      EXPECT_EQ(changed_files(before, snapshot(dir_)), "")
          << (read_only ? "read-only" : "read-write") << " open of " << file;
    }
  }

  fs::path dir_;
};

TEST_F(ForeignFiles, AnotherProgramsDatabaseStaysByteForByte) {
  const fs::path db = dir_ / "theirs.db";
  {
    test::RawDb raw(db);
    raw.exec("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)");
    raw.exec("INSERT INTO customers (name) VALUES ('ada'), ('grace')");
  }
  expect_refused_untouched(db,
                           "is a SQLite database but not a sweep store (its tables: customers)");
}

// A foreign database in WAL mode (header bytes 18 and 19) is refused before anything switches it.
TEST_F(ForeignFiles, AForeignDatabaseInWalModeStaysByteForByte) {
  const fs::path db = dir_ / "theirs-wal.db";
  {
    test::RawDb raw(db);
    raw.exec("PRAGMA journal_mode = WAL");
    raw.exec("CREATE TABLE orders (id INTEGER PRIMARY KEY)");
    raw.exec("INSERT INTO orders DEFAULT VALUES");
  }
  expect_refused_untouched(db, "not a sweep store (its tables: orders)");
}

TEST_F(ForeignFiles, ADatabaseWithSweepsTablesButAnotherApplicationIdIsRefused) {
  const fs::path db = dir_ / "lookalike.db";
  {
    test::RawDb raw(db);
    raw.exec("CREATE TABLE schema_version (singleton INTEGER PRIMARY KEY, version INTEGER)");
    raw.exec("INSERT INTO schema_version VALUES (1, 1)");
    raw.exec("PRAGMA application_id = 1234");
  }
  expect_refused_untouched(db, "not a sweep store");
}

TEST_F(ForeignFiles, TextRandomBytesAndTruncatedStoresAreRefused) {
  const fs::path text = dir_ / "notes.txt";
  std::ofstream(text) << "these are my notes, not a database\n";
  expect_refused_untouched(text, "is not a SQLite database, so not a sweep store");

  const fs::path noise = dir_ / "noise.bin";
  std::mt19937 rng(7);
  std::string bytes(8192, '\0');
  for (char& c : bytes) c = static_cast<char>(rng());
  std::ofstream(noise, std::ios::binary) << bytes;
  expect_refused_untouched(noise, "is not a SQLite database");

  // SQLite's magic, then garbage: SQLite itself calls it not a database.
  const fs::path fake = dir_ / "fake.db";
  std::ofstream(fake, std::ios::binary) << std::string("SQLite format 3\0", 16) << bytes;
  expect_refused_untouched(fake, "not a SQLite database");
}

TEST_F(ForeignFiles, ADirectoryIsNamedAsADirectory) {
  const fs::path sub = dir_ / "a-directory";
  fs::create_directories(sub);
  EXPECT_NE(open_error(sub, false).find(sub.string() + " is a directory, not a sweep database"),
            std::string::npos)
      << open_error(sub, false);
  EXPECT_NE(open_error(sub, true).find("is a directory"), std::string::npos);
}

// A file of 0 bytes is an empty SQLite database (SQLite's own rule): the store is made in it.
TEST_F(ForeignFiles, AnEmptyFileBecomesAStore) {
  const fs::path empty = dir_ / "empty.db";
  std::ofstream(empty).close();
  Store store(empty);
  EXPECT_EQ(store.schema_version(), Store::current_schema_version());
}

// ulimit -f: the write fails with EFBIG (SIGXFSZ ignored, as `sweep` does), the error says what
// happened and to which file, and the store still opens whole afterwards.
TEST_F(ForeignFiles, AFileSizeLimitIsAClearErrorAndTheStoreStaysWhole) {
  const fs::path db = dir_ / "limited.db";
  { Store store(db); }
  const fs::path message_file = dir_ / "message.txt";
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    std::signal(SIGXFSZ, SIG_IGN);
    const rlimit limit{256 * 1024, 256 * 1024};
    ::setrlimit(RLIMIT_FSIZE, &limit);
    int code = 3;
    try {
      Store store(db);
      const auto sweep_id = store.create_sweep(test::sweep_spec("big"));
      const auto ids = store.add_trials(sweep_id, test::trial_specs(1));
      std::vector<MetricPoint> batch;
      for (int step = 0;; ++step) {
        batch.push_back(test::point(ids[0], "loss", step, 1.0 / (step + 1)));
        if (batch.size() == 1000) {
          store.log_metrics(batch);
          batch.clear();
        }
      }
    } catch (const Error& e) {
      std::ofstream(message_file) << e.what();
      code = 0;
    }
    ::_exit(code);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << WTERMSIG(status);
  ASSERT_EQ(WEXITSTATUS(status), 0);
  const std::string message = bytes_of(message_file);
  EXPECT_NE(message.find("cannot write " + db.string()), std::string::npos)
      << message.substr(0, 500);
  EXPECT_NE(message.find("ulimit -f"), std::string::npos) << message;
  EXPECT_EQ(message.find(".cpp"), std::string::npos) << message;
  test::RawDb raw(db);
  EXPECT_EQ(raw.query_text("PRAGMA integrity_check"), "ok");
  Store store(db);
  EXPECT_TRUE(store.find_sweep("big").has_value());
}

// A finished sweep on a read-only file system: show/best/export/report read it without writing.
// Needs a private mount namespace (root, or a user namespace); skipped where the kernel refuses.
TEST_F(ForeignFiles, AFinishedSweepReadsOnAReadOnlyFileSystem) {
  const fs::path db = dir_ / "sweep.db";
  {
    Store store(db);
    const auto sweep_id = store.create_sweep(test::sweep_spec("done"));
    store.add_trials(sweep_id, test::trial_specs(3));
  }
  ASSERT_FALSE(fs::exists(db.string() + "-shm")) << "the last connection removes it";
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const bool root = ::geteuid() == 0;
    if (::unshare(root ? CLONE_NEWNS : CLONE_NEWUSER | CLONE_NEWNS) != 0) ::_exit(77);
    if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) ::_exit(77);
    const std::string d = dir_.string();
    if (::mount(d.c_str(), d.c_str(), nullptr, MS_BIND, nullptr) != 0) ::_exit(77);
    if (::mount(nullptr, d.c_str(), nullptr, MS_BIND | MS_REMOUNT | MS_RDONLY, nullptr) != 0)
      ::_exit(77);
    if (std::ofstream(dir_ / "probe")) ::_exit(78);  // not read-only after all
    try {
      StoreOptions options;
      options.read_only = true;
      const Store store(db, options);
      const auto sweep = store.find_sweep("done");
      ::_exit(sweep && store.trials(sweep->id).size() == 3 ? 0 : 2);
    } catch (const Error& e) {
      std::fprintf(stderr, "%s\n", e.what());
      ::_exit(1);
    }
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  if (WEXITSTATUS(status) == 77) GTEST_SKIP() << "no private mount namespace here";
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the read-only open failed (its message is above)";
}

}  // namespace
}  // namespace sweep
