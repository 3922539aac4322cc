// Opening files: fresh, reopened, foreign, damaged, newer, read-only; migration steps.
#include "store/schema.h"

#include <gmock/gmock.h>

#include <fstream>
#include <sstream>

#include "raw_sqlite.h"
#include "store/sqlite_connection.h"
#include "store_test_util.h"

namespace sweep::test {
namespace {

using ::testing::HasSubstr;

std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(StoreSchema, FreshFileGetsDirectoriesSchemaAndWal) {
  TempDir dir;
  const auto path = dir / "runs/demo/sweep.db";
  {
    Store store(path);
    EXPECT_EQ(store.schema_version(), Store::current_schema_version());
    EXPECT_FALSE(store.read_only());
  }
  ASSERT_TRUE(std::filesystem::exists(path));
  RawDb raw(path);
  EXPECT_EQ(raw.query_text("PRAGMA journal_mode"), "wal");
  EXPECT_EQ(raw.query_text("SELECT version FROM schema_version"),
            std::to_string(Store::current_schema_version()));
  EXPECT_EQ(raw.query_text("PRAGMA application_id"), std::to_string(store_detail::kApplicationId));
}

TEST(StoreSchema, ReopeningKeepsDataAndVersion) {
  TempDir dir;
  const auto path = dir / "sweep.db";
  std::int64_t id = 0;
  { id = Store(path).create_sweep(sweep_spec("keep")); }
  Store again(path);
  ASSERT_TRUE(again.find_sweep(id).has_value());
  EXPECT_EQ(again.find_sweep(id)->name, "keep");
}

TEST(StoreSchema, FileThatIsNotSqliteIsRefusedNamingThePath) {
  TempDir dir;
  const auto path = dir / "notes.db";
  std::ofstream(path) << std::string(3000, 'x') << "\nthis is a text file, not a database\n";
  const auto message = error_of([&] { Store store(path); });
  EXPECT_THAT(message, HasSubstr(path.string()));
  EXPECT_THAT(message, HasSubstr("not a SQLite database"));
  const auto read_only_message = error_of([&] { Store store(path, {.read_only = true}); });
  EXPECT_THAT(read_only_message, HasSubstr("not a SQLite database"));
}

TEST(StoreSchema, DamagedSqliteFileIsRefusedNamingThePath) {
  TempDir dir;
  const auto path = dir / "damaged.db";
  {
    Store store(path);
    store.create_sweep(sweep_spec("x"));
  }
  // Keep the SQLite header, destroy the schema page that follows it.
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(100);
    const std::string junk(3000, '\x5a');
    f.write(junk.data(), static_cast<std::streamsize>(junk.size()));
  }
  std::filesystem::remove(path.string() + "-wal");
  std::filesystem::remove(path.string() + "-shm");
  const auto message = error_of([&] { Store store(path); });
  EXPECT_THAT(message, HasSubstr(path.string()));
}

TEST(StoreSchema, ForeignSqliteDatabaseIsRefusedListingItsTables) {
  TempDir dir;
  const auto path = dir / "app.db";
  {
    RawDb raw(path);
    raw.exec(
        "CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT); "
        "CREATE TABLE orders (id INTEGER PRIMARY KEY)");
  }
  const auto message = error_of([&] { Store store(path); });
  EXPECT_THAT(message, HasSubstr(path.string()));
  EXPECT_THAT(message, HasSubstr("not a sweep store"));
  EXPECT_THAT(message, HasSubstr("orders, users"));
  // And nothing was added to the foreign file.
  RawDb raw(path);
  EXPECT_EQ(raw.query_text("SELECT count(*) FROM sqlite_master"), "2");
}

TEST(StoreSchema, ForeignDatabaseWithATableNamedSchemaVersionIsRefused) {
  TempDir dir;
  const auto path = dir / "other.db";
  {
    RawDb raw(path);
    raw.exec(
        "CREATE TABLE schema_version (version INTEGER); INSERT INTO schema_version VALUES (1);"
        "PRAGMA application_id = 1234");
  }
  EXPECT_THAT(error_of([&] { Store store(path); }), HasSubstr("not a sweep store"));
}

TEST(StoreSchema, DamagedVersionTableIsRefused) {
  TempDir dir;
  const auto path = dir / "sweep.db";
  { Store store(path); }
  {
    RawDb raw(path);
    raw.exec("DELETE FROM schema_version");
  }
  const auto message = error_of([&] { Store store(path); });
  EXPECT_THAT(message, HasSubstr(path.string()));
  EXPECT_THAT(message, HasSubstr("schema_version"));
}

TEST(StoreSchema, NewerSchemaIsRefusedAskingForAnUpgrade) {
  TempDir dir;
  const auto path = dir / "sweep.db";
  { Store store(path); }
  {
    RawDb raw(path);
    raw.exec("UPDATE schema_version SET version = 99");
  }
  for (bool read_only : {false, true}) {
    const auto message = error_of([&] { Store store(path, {.read_only = read_only}); });
    EXPECT_THAT(message, HasSubstr(path.string()));
    EXPECT_THAT(message, HasSubstr("newer sweep"));
    EXPECT_THAT(message, HasSubstr("99"));
  }
}

TEST(StoreSchema, ReadOnlyOpenReadsButRefusesWritesAndMissingFiles) {
  TempDir dir;
  const auto path = dir / "sweep.db";
  EXPECT_THAT(error_of([&] { Store store(path, {.read_only = true}); }),
              HasSubstr("no sweep database at"));
  EXPECT_FALSE(std::filesystem::exists(path));
  std::int64_t id = 0;
  { id = Store(path).create_sweep(sweep_spec("ro")); }
  Store reader(path, {.read_only = true});
  EXPECT_TRUE(reader.read_only());
  ASSERT_TRUE(reader.find_sweep("ro").has_value());
  EXPECT_THAT(error_of([&] { reader.create_sweep(sweep_spec("other")); }), HasSubstr("read-only"));
  EXPECT_THAT(error_of([&] { reader.set_sweep_state(id, SweepState::running); }),
              HasSubstr("read-only"));
}

// The database a v1 release wrote, built from the frozen copy of step 1: it must open and read
// in today's code (this fails if someone edits step 1 in place instead of adding a step).
TEST(StoreSchema, DatabaseWrittenByV1OpensInCurrentCode) {
  TempDir dir;
  const auto path = dir / "v1.db";
  {
    std::ifstream f(std::string(SWEEP_STORE_FIXTURES) + "/schema_v1.sql");
    ASSERT_TRUE(f) << "missing fixture schema_v1.sql";
    std::stringstream sql;
    sql << f.rdbuf();
    RawDb raw(path);
    raw.exec("PRAGMA journal_mode = WAL; BEGIN;" + sql.str());
    raw.exec(
        "INSERT INTO schema_version VALUES (1, 1, 1700000000.0);"
        "PRAGMA application_id = " +
        std::to_string(store_detail::kApplicationId) +
        ";"
        "INSERT INTO sweeps (id, name, config_yaml, metric_name, metric_goal, state, created_at) "
        "  VALUES (7, 'old', 'name: old', 'val_loss', 'minimize', 'completed', 1700000000.0);"
        "INSERT INTO trials (id, sweep_id, number, state, params_json, queued_at, updated_at) "
        "  VALUES (70, 7, 0, 'completed', '{\"lr\":0.1}', 1700000001.0, 1700000002.0);"
        "INSERT INTO trial_params VALUES (70, 'lr', '0.1');"
        "INSERT INTO metrics VALUES (70, 'val_loss', 1, 1.0, 0.5, 'finite', 1700000003.0);"
        "INSERT INTO metrics VALUES (70, 'val_loss', 2, 2.0, NULL, 'nan', 1700000004.0);"
        // A v1 queue job: its target travelled as the config's last line.
        "INSERT INTO jobs (id, config_yaml, created_at) VALUES (5, "
        "  'name: old\ntraining: {epochs: 2}\n# sweep-job {\"cwd\":\"/home/a b\",\"name\":"
        "\"old\",\"output_dir\":\"runs\",\"overrides\":[\"training.epochs=2\"],"
        "\"trial_crash_limit\":4}\n', 1700000005.0);"
        "INSERT INTO jobs (id, config_yaml, created_at) VALUES (6, 'name: plain\n', 1700000006.0);"
        "COMMIT;");
  }
  Store store(path);
  EXPECT_EQ(store.schema_version(), Store::current_schema_version());
  const auto sweep = store.find_sweep("old");
  ASSERT_TRUE(sweep.has_value());
  EXPECT_EQ(sweep->metric_goal, MetricGoal::minimize);
  EXPECT_EQ(sweep->state, SweepState::completed);
  const auto trials = store.trials(7);
  ASSERT_EQ(trials.size(), 1u);
  EXPECT_DOUBLE_EQ(trials[0].params.at("lr").get<double>(), 0.1);
  const auto points = store.trial_metrics(70);
  ASSERT_EQ(points.size(), 2u);
  EXPECT_DOUBLE_EQ(points[0].value, 0.5);
  EXPECT_TRUE(std::isnan(points[1].value));
  ASSERT_TRUE(store.best_trial(7).has_value());
  EXPECT_DOUBLE_EQ(store.best_trial(7)->value, 0.5);
  // The v2 migration moved the job line into columns and gave back the user's config text.
  const auto job = store.job(5);
  ASSERT_TRUE(job.has_value());
  EXPECT_EQ(job->config_yaml, "name: old\ntraining: {epochs: 2}\n");
  EXPECT_EQ(job->target.working_dir, "/home/a b");
  EXPECT_EQ(job->target.sweep_name, "old");
  EXPECT_EQ(job->target.output_dir, "runs");
  EXPECT_EQ(job->target.overrides, std::vector<std::string>{"training.epochs=2"});
  EXPECT_EQ(job->target.trial_crash_limit, 4);
  EXPECT_EQ(store.job(6)->config_yaml, "name: plain\n");
  EXPECT_EQ(store.job(6)->target.working_dir, "");
}

// The migration runner with a step beyond today's: applied once, recorded, then refused by a
// build that only knows v1, and reported as needing an upgrade to a read-only open.
TEST(StoreSchema, MigrationRunnerAppliesOnlyMissingSteps) {
  TempDir dir;
  const auto path = dir / "sweep.db";
  { Store store(path); }
  std::vector<store_detail::Migration> steps(store_detail::migrations().begin(),
                                             store_detail::migrations().end());
  const int next = steps.back().version + 1;
  steps.push_back({next, "CREATE TABLE trial_notes (trial_id INTEGER, note TEXT);"});
  {
    store_detail::Connection ro(path, {.read_only = true});
    EXPECT_THAT(error_of([&] { store_detail::check_schema(ro, steps); }),
                HasSubstr("needs an upgrade"));
  }
  {
    store_detail::Connection conn(path, {});
    EXPECT_EQ(store_detail::migrate(conn, steps), next);
    EXPECT_EQ(store_detail::migrate(conn, steps), next);  // nothing left to apply: no error
  }
  RawDb raw(path);
  EXPECT_EQ(raw.query_text("SELECT version FROM schema_version"), std::to_string(next));
  EXPECT_EQ(raw.query_text("SELECT count(*) FROM sqlite_master WHERE name = 'trial_notes'"), "1");
  EXPECT_THAT(error_of([&] { Store store(path); }), HasSubstr("newer sweep"));
}

}  // namespace
}  // namespace sweep::test
