// Transactions: an exception inside a write leaves nothing behind; the connection stays usable.
#include <gmock/gmock.h>

#include <thread>

#include "raw_sqlite.h"
#include "store/sqlite_connection.h"
#include "store_test_util.h"

namespace sweep::test {
namespace {

TEST(StoreTransactions, ExceptionInsideAWriteRollsEverythingBack) {
  TempDir dir;
  const auto path = dir / "sweep.db";
  { Store store(path); }
  store_detail::Connection conn(path, {});
  conn.exec("PRAGMA foreign_keys = ON");
  const auto count_sweeps = [&] {
    return conn.read([&] {
      auto s = conn.statement("SELECT count(*) FROM sweeps");
      s->step();
      return s->int64(0);
    });
  };
  EXPECT_THROW(conn.write([&] {
    auto s = conn.statement(
        "INSERT INTO sweeps (name, config_yaml, metric_name, metric_goal, created_at) "
        "VALUES (?, '', 'm', 'maximize', 0)");
    s->bind_all("half").step();
    throw std::runtime_error("the caller failed between two writes");
  }),
               std::runtime_error);
  EXPECT_EQ(count_sweeps(), 0);
  // A failing statement (CHECK constraint) inside the transaction also rolls back the earlier one.
  EXPECT_THROW(conn.write([&] {
    conn.exec(
        "INSERT INTO sweeps (name, config_yaml, metric_name, metric_goal, "
        "created_at) VALUES ('ok', '', 'm', 'maximize', 0)");
    conn.exec(
        "INSERT INTO sweeps (name, config_yaml, metric_name, metric_goal, "
        "created_at) VALUES ('bad', '', 'm', 'sideways', 0)");
  }),
               CallError);
  EXPECT_EQ(count_sweeps(), 0);
  // And the connection is not left inside a transaction.
  conn.write([&] {
    conn.exec(
        "INSERT INTO sweeps (name, config_yaml, metric_name, metric_goal, created_at) "
        "VALUES ('after', '', 'm', 'maximize', 0)");
  });
  EXPECT_EQ(count_sweeps(), 1);
}

// BEGIN IMMEDIATE while another connection holds the write lock: our write waits and succeeds
// once the lock is released, instead of failing with "database is locked".
TEST(StoreTransactions, WriteWaitsForAnotherWriterInsteadOfFailing) {
  TempDir dir;
  const auto path = dir / "sweep.db";
  Store store(path, {.busy_timeout_ms = 50, .retry_limit = std::chrono::seconds(20)});
  const auto s = store.create_sweep(sweep_spec("w"));
  RawDb other(path);
  other.exec("BEGIN IMMEDIATE");
  std::thread release([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    other.exec("COMMIT");
  });
  EXPECT_NO_THROW(store.add_trials(s, trial_specs(2)));
  release.join();
  EXPECT_EQ(store.trials(s).size(), 2u);
}

// Past the retry limit the user gets one readable error naming the file, not SQLITE_BUSY.
TEST(StoreTransactions, GivesUpWithAClearErrorWhenTheLockNeverComes) {
  TempDir dir;
  const auto path = dir / "sweep.db";
  Store store(path, {.busy_timeout_ms = 20, .retry_limit = std::chrono::milliseconds(200)});
  RawDb other(path);
  other.exec("BEGIN IMMEDIATE");
  try {
    store.create_sweep(sweep_spec("never"));
    FAIL() << "wrote while another connection held the write lock";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr(path.string()));
    EXPECT_THAT(e.what(), ::testing::HasSubstr("stayed locked"));
  }
  // Readers are not blocked by that writer (WAL).
  EXPECT_NO_THROW(store.list_sweeps());
  other.exec("ROLLBACK");
  EXPECT_NO_THROW(store.create_sweep(sweep_spec("now")));
}

}  // namespace
}  // namespace sweep::test
