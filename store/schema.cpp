/*
 * schema.cpp — the schema (migration steps as raw SQL strings) and the code that applies them.
 *
 * Decisions written into the DDL:
 *  - metrics is WITHOUT ROWID with PRIMARY KEY (trial_id, name, step): the key is the uniqueness
 *    rule (a re-written point replaces, never duplicates), the clustered order is exactly the
 *    report's read order (trial, name, step), and there is no second index to maintain per insert.
 *  - NaN / ±Inf are stored as value NULL plus value_kind (Optuna's trick): SQLite turns a bound
 *    NaN into NULL anyway, and a CHECK keeps value and kind consistent.
 *  - States are stored as text with a CHECK listing the allowed values, so the file reads on its
 *    own and a typo in code fails loudly at the write, not later in a report. The CHECKs are
 *    written as `x = 'a' OR x = 'b'`, never `x IN (...)`: SQLite builds a temporary b-tree for an
 *    IN list on every row it checks, which cost a third of the metric insert time.
 *  - Every child row REFERENCES its parent with ON DELETE CASCADE (foreign_keys is ON per
 *    connection), and every foreign key column leads an index so the checks stay cheap.
 */
#include "store/schema.h"

#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "store/sqlite_connection.h"
#include "store/store.h"

namespace sweep::store_detail {
namespace {

constexpr std::string_view kSchemaV1 = R"sql(
-- One row: the schema version of this file (steps 1..version of schema.cpp were applied).
CREATE TABLE schema_version (
  singleton  INTEGER PRIMARY KEY CHECK (singleton = 1),
  version    INTEGER NOT NULL,
  updated_at REAL NOT NULL                      -- UTC seconds of the last migration
);

-- A sweep: one `sweep run` of one config. Times are UTC seconds since the epoch (REAL).
CREATE TABLE sweeps (
  id          INTEGER PRIMARY KEY,
  name        TEXT NOT NULL UNIQUE,
  config_yaml TEXT NOT NULL,                    -- the whole config as the user gave it
  config_path TEXT NOT NULL DEFAULT '',
  metric_name TEXT NOT NULL,                    -- the metric the sweep optimises
  metric_goal TEXT NOT NULL CHECK (metric_goal = 'maximize' OR metric_goal = 'minimize'),
  state       TEXT NOT NULL DEFAULT 'created'
              CHECK (state = 'created' OR state = 'running' OR state = 'completed' OR
                     state = 'interrupted' OR state = 'failed' OR state = 'cancelled'),
  devices     TEXT NOT NULL DEFAULT '',         -- the devices it ran on, as the scheduler names them
  created_at  REAL NOT NULL,
  started_at  REAL,
  finished_at REAL
);

-- A trial: one point of the search space, trained once (state text from common/trial_state.h).
CREATE TABLE trials (
  id              INTEGER PRIMARY KEY,
  sweep_id        INTEGER NOT NULL REFERENCES sweeps(id) ON DELETE CASCADE,
  number          INTEGER NOT NULL CHECK (number >= 0),   -- 0-based within the sweep
  state           TEXT NOT NULL DEFAULT 'queued'
                  CHECK (state = 'queued' OR state = 'running' OR state = 'completed' OR
                         state = 'failed' OR state = 'diverged' OR state = 'stopped_early' OR
                         state = 'cancelled' OR state = 'interrupted'),
  device          TEXT NOT NULL DEFAULT '',
  params_json     TEXT NOT NULL DEFAULT '{}',             -- {"training.learning_rate": 0.01}
  config_yaml     TEXT NOT NULL DEFAULT '',               -- the resolved config of this trial
  seed            INTEGER NOT NULL DEFAULT 0,
  repeat          INTEGER NOT NULL DEFAULT 0,
  queued_at       REAL NOT NULL,
  started_at      REAL,
  finished_at     REAL,
  wait_reason     TEXT NOT NULL DEFAULT '',               -- why a queued trial waits
  stop_reason     TEXT NOT NULL DEFAULT '',               -- which rule stopped it early
  error           TEXT NOT NULL DEFAULT '',
  attempts        INTEGER NOT NULL DEFAULT 0,             -- times it was started
  checkpoint_path TEXT NOT NULL DEFAULT '',
  log_path        TEXT NOT NULL DEFAULT '',
  summary_json    TEXT NOT NULL DEFAULT '{}',             -- best/final metrics, images/s, ...
  updated_at      REAL NOT NULL,
  UNIQUE (sweep_id, number)                               -- also the index for "trials of a sweep"
);
-- Claims ("next queued trial") and status counts.
CREATE INDEX trials_by_sweep_state ON trials (sweep_id, state, number);

-- One row per trial and parameter, so queries can filter and group by a parameter's value.
CREATE TABLE trial_params (
  trial_id   INTEGER NOT NULL REFERENCES trials(id) ON DELETE CASCADE,
  name       TEXT NOT NULL,                     -- dotted config key, "training.batch_size"
  value_json TEXT NOT NULL,                     -- the value as JSON text: 64, 0.01, "adam"
  PRIMARY KEY (trial_id, name)
) WITHOUT ROWID;
CREATE INDEX trial_params_by_name_value ON trial_params (name, value_json);

-- Metric series. value is NULL exactly when value_kind is not 'finite' (NaN / Inf).
CREATE TABLE metrics (
  trial_id   INTEGER NOT NULL REFERENCES trials(id) ON DELETE CASCADE,
  name       TEXT NOT NULL,
  step       INTEGER NOT NULL,                  -- iteration, or epoch for per-epoch series
  epoch      REAL,                              -- fractional epoch at this step, when known
  value      REAL,
  value_kind TEXT NOT NULL CHECK (value_kind = 'finite' OR value_kind = 'nan' OR
                                  value_kind = 'inf' OR value_kind = '-inf'),
  wall_time  REAL NOT NULL,                     -- UTC seconds when measured
  PRIMARY KEY (trial_id, name, step),
  CHECK ((value_kind = 'finite') = (value IS NOT NULL))
) WITHOUT ROWID;

-- What happened, for `sweep logs` and the report's timeline.
CREATE TABLE events (
  id       INTEGER PRIMARY KEY,
  sweep_id INTEGER NOT NULL REFERENCES sweeps(id) ON DELETE CASCADE,
  trial_id INTEGER REFERENCES trials(id) ON DELETE CASCADE,   -- NULL: about the whole sweep
  time     REAL NOT NULL,
  kind     TEXT NOT NULL,
  message  TEXT NOT NULL DEFAULT ''
);
CREATE INDEX events_by_sweep ON events (sweep_id, id);
CREATE INDEX events_by_trial ON events (trial_id);

-- The background queue (`sweep submit`): a worker claims a job with a lease it must renew.
CREATE TABLE jobs (
  id               INTEGER PRIMARY KEY,
  sweep_id         INTEGER REFERENCES sweeps(id) ON DELETE SET NULL,  -- once the worker made it
  config_path      TEXT NOT NULL DEFAULT '',
  config_yaml      TEXT NOT NULL,               -- as submitted: the file may change afterwards
  priority         INTEGER NOT NULL DEFAULT 0,  -- higher first; then oldest first
  state            TEXT NOT NULL DEFAULT 'queued'
                   CHECK (state = 'queued' OR state = 'running' OR state = 'done' OR
                          state = 'failed' OR state = 'cancelled'),
  lease_owner      TEXT NOT NULL DEFAULT '',    -- worker "host:pid:n" holding the lease
  lease_expires_at REAL,
  heartbeat_at     REAL,
  attempts         INTEGER NOT NULL DEFAULT 0,  -- times a worker claimed it
  max_attempts     INTEGER NOT NULL DEFAULT 3 CHECK (max_attempts >= 1),
  created_at       REAL NOT NULL,
  started_at       REAL,
  finished_at      REAL,
  error            TEXT NOT NULL DEFAULT '',
  exit_code        INTEGER
);
CREATE INDEX jobs_claim_order ON jobs (state, priority DESC, created_at, id);
CREATE INDEX jobs_by_lease ON jobs (state, lease_expires_at);
CREATE INDEX jobs_by_sweep ON jobs (sweep_id);
)sql";

// v2: where a queued job runs and goes, in columns of its own. Until v1 that data travelled as
// the job config's last line, "# sweep-job {json}": those lines move into the columns here, and
// the config text is left as the user's file was.
constexpr std::string_view kSchemaV2 = R"sql(
ALTER TABLE jobs ADD COLUMN working_dir TEXT NOT NULL DEFAULT '';
ALTER TABLE jobs ADD COLUMN sweep_name TEXT NOT NULL DEFAULT '';
ALTER TABLE jobs ADD COLUMN output_dir TEXT NOT NULL DEFAULT '';
ALTER TABLE jobs ADD COLUMN overrides_json TEXT NOT NULL DEFAULT '[]';  -- ["training.epochs=2"]
ALTER TABLE jobs ADD COLUMN trial_crash_limit INTEGER NOT NULL DEFAULT 0;
UPDATE jobs SET
  working_dir = coalesce(json_extract(line, '$.cwd'), ''),
  sweep_name = coalesce(json_extract(line, '$.name'), ''),
  output_dir = coalesce(json_extract(line, '$.output_dir'), 'runs'),
  overrides_json = coalesce(json_extract(line, '$.overrides'), '[]'),
  trial_crash_limit = coalesce(json_extract(line, '$.trial_crash_limit'), 0),
  config_yaml = rtrim(substr(config_yaml, 1, at - 1), char(10)) || char(10)
FROM (SELECT id AS job_id, instr(config_yaml, char(10) || '# sweep-job {') + 1 AS at,
             substr(config_yaml, instr(config_yaml, char(10) || '# sweep-job {') + 13) AS line
      FROM jobs WHERE instr(config_yaml, char(10) || '# sweep-job {') > 0
        AND json_valid(substr(config_yaml, instr(config_yaml, char(10) || '# sweep-job {') + 13)))
WHERE jobs.id = job_id;
)sql";

constexpr std::array<Migration, 2> kMigrations{{
    {1, kSchemaV1},
    {2, kSchemaV2},
}};

std::string join(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

// The version recorded in the file: 0 for a file with no tables (fresh), else schema_version's.
int recorded_version(Connection& conn) {
  std::vector<std::string> tables;
  {
    auto s = conn.statement(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
        "ORDER BY name");
    while (s->step()) tables.push_back(s->text(0));
  }
  if (tables.empty()) return 0;
  const std::string where = conn.path().string();
  std::int64_t application_id = 0;
  {
    auto s = conn.statement("PRAGMA application_id");
    if (s->step()) application_id = s->int64(0);
  }
  const bool has_version_table =
      std::find(tables.begin(), tables.end(), "schema_version") != tables.end();
  if (!has_version_table || (application_id != 0 && application_id != kApplicationId))
    throw Error(where + " is a SQLite database but not a sweep store (its tables: " + join(tables) +
                "); give sweep a path of its own, e.g. runs/NAME/sweep.db");
  std::vector<std::int64_t> versions;
  {
    auto s = conn.statement("SELECT version FROM schema_version");
    while (s->step()) versions.push_back(s->int64(0));
  }
  if (versions.size() != 1 || versions[0] < 1)
    throw Error(where + " has a damaged schema_version table (" + std::to_string(versions.size()) +
                " rows instead of one version >= 1); it is not a store sweep can open");
  return static_cast<int>(versions[0]);
}

void reject_newer(const Connection& conn, int version, std::span<const Migration> steps) {
  const int known = steps.empty() ? 0 : steps.back().version;
  if (version > known)
    throw Error(conn.path().string() + " was written by a newer sweep (schema version " +
                std::to_string(version) + "; this sweep knows up to " + std::to_string(known) +
                "): upgrade sweep to open it");
}

}  // namespace

std::span<const Migration> migrations() { return kMigrations; }
int current_schema_version() { return kMigrations.back().version; }

int migrate(Connection& conn, std::span<const Migration> steps) {
  return conn.write([&] {
    const int found = recorded_version(conn);
    reject_newer(conn, found, steps);
    int version = found;
    for (const auto& step : steps) {
      if (step.version <= version) continue;
      conn.exec(std::string(step.sql).c_str());
      auto s = conn.statement(
          "INSERT INTO schema_version (singleton, version, updated_at) VALUES (1, ?, ?) "
          "ON CONFLICT (singleton) DO UPDATE SET version = excluded.version, "
          "updated_at = excluded.updated_at");
      s->bind_all(step.version, utc_now()).step();
      version = step.version;
    }
    if (found == 0)
      conn.exec(("PRAGMA application_id = " + std::to_string(kApplicationId)).c_str());
    return version;
  });
}

int inspect(Connection& conn, std::span<const Migration> steps) {
  return conn.read([&] {
    const int found = recorded_version(conn);
    reject_newer(conn, found, steps);
    return found;
  });
}

int check_schema(Connection& conn, std::span<const Migration> steps) {
  return conn.read([&] {
    const int found = recorded_version(conn);
    reject_newer(conn, found, steps);
    const int known = steps.empty() ? 0 : steps.back().version;
    if (found == 0)
      throw Error(conn.path().string() +
                  " holds no sweep store yet (no tables): nothing was "
                  "run there");
    if (found < known)
      throw Error(conn.path().string() + " has schema version " + std::to_string(found) +
                  " and needs an upgrade to " + std::to_string(known) +
                  ", which a read-only open cannot do: run any sweep command that writes to it "
                  "once (e.g. `sweep run` resuming it)");
    return found;
  });
}

}  // namespace sweep::store_detail
