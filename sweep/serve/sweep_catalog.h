/*
 * sweep_catalog.h — the sweeps of an output directory, as `sweep serve` offers them: which
 * names exist, where each one's database is, and what the list page says about each.
 *
 * The non-obvious decisions:
 *  - A sweep is named in URLs by its directory under OUT (OUT/NAME/sweep.db), and a name is one
 *    path component and nothing else: no '/', not "." or "..", no control character. A name
 *    that is not one, or whose sweep.db does not exist as a regular file, is simply not found;
 *    nothing is ever created, so a request cannot make a store appear.
 *  - A directory may have been renamed or copied (a sweep directory is relocatable): its page
 *    shows the sweep named like the directory, else the newest sweep its database holds.
 *  - Every read opens the store read-only for that request alone (WAL: the sweep's writer is
 *    never blocked, and a request sees one consistent snapshot).
 *
 * Thread safety: free functions; each opens its own read-only connection.
 */
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "reports/report_data.h"
#include "store/records.h"
#include "sweep/serve/store_version.h"

namespace sweep::serve {

// One directory name under OUT that a URL may name.
bool is_sweep_name(std::string_view name);

// OUT/NAME/sweep.db when NAME is a sweep name and that file exists; never creates anything.
std::optional<std::filesystem::path> find_sweep_database(const std::filesystem::path& out_dir,
                                                         std::string_view name);

// Every NAME under OUT that has a sweep.db, sorted by name. An OUT that does not exist has none.
std::vector<std::string> sweep_names(const std::filesystem::path& out_dir);

// What the list of sweeps shows about one.
struct SweepListing {
  std::string name;  // the directory's name (what the URLs use)
  StoreVersion version;
  std::optional<SweepSummary> sweep;  // nullopt when the database could not be read (see error)
  std::optional<double> best;         // best value of the sweep's metric so far
  std::optional<std::int64_t> best_trial;
  std::string error;
};
SweepListing describe_sweep(const std::filesystem::path& out_dir, const std::string& name);

// Everything the report of OUT/NAME is drawn from, read in one read-only open of its store;
// nullopt while the database holds no sweep yet. Throws sweep::Error when the file cannot be
// read as a sweep store (not SQLite, another program's, damaged).
std::optional<reports::ReportData> load_sweep(const std::filesystem::path& db,
                                              const std::string& name);

}  // namespace sweep::serve
