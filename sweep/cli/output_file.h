/*
 * output_file.h — where `sweep export -o` and `sweep report -o` write: a file, or standard output
 * for "-", and never over a database.
 *
 * The decisions:
 *  - "-" is standard output, as every Unix tool reads it (a file named "-" is written as ./-).
 *    An empty path names nothing: a usage error, never standard output by default.
 *  - A path that is a pipe or a character device once its links are followed (/dev/stdout,
 *    a shell's >(...), /dev/null) is opened by that path and written in place: the kernel
 *    follows /proc/self/fd links that name no file ("pipe:[N]"), which reading them cannot.
 *  - An output path is refused, before anything is written, when it names an SQLite database (its
 *    first 16 bytes are "SQLite format 3\0": the sweep's own runs/NAME/sweep.db, a queue.db,
 *    any other), the -wal, -shm or -journal file beside one (SQLite would read what is written
 *    there as the database's own log), or one of those files of the sweep's own store while it
 *    has none yet. `sweep export q -o runs/q/sweep.db` replaced the store by a CSV table and said
 *    "wrote". --force writes anyway.
 *
 *   refuse_database_output(output, store.path(), force);   // throws sweep::Error
 *   write_output(output, text);
 */
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace sweep::cli {

// Standard output's name as an output path.
inline constexpr std::string_view kStandardOutput = "-";

// Why `path` must not be written over (see above), or nullopt. `own_database` is the store of the
// sweep being written out.
std::optional<std::string> database_at(const std::filesystem::path& path,
                                       const std::filesystem::path& own_database);

// Why `path` cannot be an -o value as given ("" when it can): an empty one.
std::string output_path_problem(const std::string& path);

// Throws sweep::Error ("refusing to write PATH: it is ...; give --force to write it anyway")
// when database_at names a reason and `force` is false.
void refuse_database_output(const std::string& path, const std::filesystem::path& own_database,
                            bool force);

// `text` to standard output when `path` is "-", else to the file, whole or not at all
// (reports::write_file_atomically). False for standard output, true for a file.
bool write_output(const std::string& path, std::string_view text);

}  // namespace sweep::cli
