/*
 * schema.h — the database schema as an ordered list of migration steps, and the code that
 * recognises a file and brings it up to date.
 *
 * The decision: a step is never edited once shipped. Version N of the schema is exactly steps
 * 1..N, so any database a released sweep wrote can be migrated forward step by step; a change
 * is a new step appended to the list (tests/store/fixtures holds the frozen v1 to prove it).
 */
#pragma once

#include <span>
#include <string_view>

namespace sweep::store_detail {

class Connection;

struct Migration {
  int version;           // the schema version after this step
  std::string_view sql;  // DDL, run inside the migrating transaction
};

// The steps that make the current schema, oldest first.
std::span<const Migration> migrations();
int current_schema_version();

// "SWPE": written to the file header's application_id, so `file` and sweep recognise the file.
inline constexpr int kApplicationId = 0x53575045;

// Recognises the file behind a read-write connection and migrates it to the last of `steps`
// (creating the schema in an empty file). One BEGIN IMMEDIATE transaction, so several processes
// opening the same fresh file at once create it exactly once. Returns the resulting version.
// Throws sweep::Error naming the path for a non-SQLite file, a foreign SQLite database, or a
// newer schema than `steps` know.
int migrate(Connection& conn, std::span<const Migration> steps);
// What the file is, read without changing it: 0 for a file with no tables (fresh), else its
// schema version. Throws sweep::Error naming the path for a foreign SQLite database, a damaged
// schema_version table, or a newer schema than `steps` know.
int inspect(Connection& conn, std::span<const Migration> steps);
// Read-only check: the version of the file, throwing as migrate() does, and also when the file
// is older than `steps` (a read-only open cannot migrate it).
int check_schema(Connection& conn, std::span<const Migration> steps);

}  // namespace sweep::store_detail
