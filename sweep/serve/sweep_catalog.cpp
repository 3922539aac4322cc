/*
 * sweep_catalog.cpp — names, paths and summaries of the sweeps under OUT (sweep_catalog.h).
 */
#include "sweep/serve/sweep_catalog.h"

#include <algorithm>
#include <system_error>

#include "common/check.h"
#include "reports/report.h"
#include "store/store.h"
#include "sweep/run/sweep_layout.h"

namespace sweep::serve {

namespace fs = std::filesystem;

namespace {

constexpr std::size_t kMaxNameBytes = 255;  // one path component (NAME_MAX)

Store open_read_only(const fs::path& db) {
  StoreOptions options;
  options.read_only = true;
  return Store(db, options);
}

// The sweep the page of directory `name` shows: the one named like it, else the newest.
std::optional<SweepSummary> pick_sweep(const Store& store, const std::string& name) {
  std::vector<SweepSummary> sweeps = store.list_sweeps();  // newest first
  if (sweeps.empty()) return std::nullopt;
  const auto same = std::find_if(sweeps.begin(), sweeps.end(),
                                 [&](const SweepSummary& s) { return s.sweep.name == name; });
  return same != sweeps.end() ? *same : sweeps.front();
}

}  // namespace

bool is_sweep_name(std::string_view name) {
  if (name.empty() || name.size() > kMaxNameBytes || name == "." || name == "..") return false;
  return std::none_of(name.begin(), name.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return c == '/' || c == '\\' || u < 0x20 || u == 0x7f;
  });
}

std::optional<fs::path> find_sweep_database(const fs::path& out_dir, std::string_view name) {
  if (!is_sweep_name(name)) return std::nullopt;
  const fs::path db = run::database_in(run::sweep_dir(out_dir, std::string(name)));
  std::error_code ec;
  if (!fs::is_regular_file(db, ec)) return std::nullopt;
  return db;
}

std::vector<std::string> sweep_names(const fs::path& out_dir) {
  std::vector<std::string> names;
  std::error_code ec;
  fs::directory_iterator it(out_dir, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (find_sweep_database(out_dir, name)) names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

SweepListing describe_sweep(const fs::path& out_dir, const std::string& name) {
  SweepListing listing;
  listing.name = name;
  const std::optional<fs::path> db = find_sweep_database(out_dir, name);
  if (!db) {
    listing.error = "no sweep database";
    return listing;
  }
  listing.version = store_version(*db);
  try {
    const Store store = open_read_only(*db);
    listing.sweep = pick_sweep(store, name);
    if (!listing.sweep) {
      listing.error = "no sweep in its database yet";
      return listing;
    }
    if (const std::optional<BestTrial> best = store.best_trial(listing.sweep->sweep.id)) {
      listing.best = best->value;
      listing.best_trial = best->trial.number;
    }
  } catch (const Error& e) {
    listing.error = e.what();
  }
  return listing;
}

std::optional<reports::ReportData> load_sweep(const fs::path& db, const std::string& name) {
  const Store store = open_read_only(db);
  const std::optional<SweepSummary> sweep = pick_sweep(store, name);
  if (!sweep) return std::nullopt;
  reports::ReportData data = reports::load_report_data(store, sweep->sweep.name);
  data.generated_at = utc_now();
  return data;
}

}  // namespace sweep::serve
