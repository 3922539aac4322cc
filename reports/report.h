/*
 * report.h — the HTML report of one sweep: which learning rate and batch size won, by how much,
 * and how every trial learned.
 *
 * The non-obvious decisions:
 *  - The report is a pure function of the sweep's database: load_report_data() reads everything
 *    in a fixed number of queries (the metric series of the whole sweep in one pass), and
 *    render_report() turns the result into one self-contained HTML file (ECharts, script, style
 *    and data inline; no network), so it opens offline in any browser and can be mailed around.
 *  - Every text that comes from the config or the database is escaped for where it lands (HTML
 *    entities in the page, \u003c-escaped JSON in the data block): a sweep named
 *    "<script>alert(1)</script>" shows those characters and runs nothing.
 *  - write_report() writes a temporary file next to the target and renames it over, so a browser
 *    refreshing the report mid-sweep never sees half a file.
 *
 * Thread safety: render_report() is a pure function; write_report() only reads the store.
 *
 *   sweep::Store store("runs/demo/sweep.db", {.read_only = true});
 *   sweep::reports::write_report(store, "demo", "runs/demo/report.html");
 */
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "reports/report_data.h"

namespace sweep {
class Store;
}

namespace sweep::reports {

// The whole page. Never throws for odd data (empty sweep, NaN metrics, hostile names).
std::string render_report(const ReportData& data);

// One sweep out of the store, by name, or by numeric id when no sweep has that name.
// Throws sweep::Error naming the sweep and the database when there is no such sweep.
ReportData load_report_data(const Store& store, std::string_view sweep);

// load_report_data + render_report, generated now: the page `sweep report` writes.
std::string report_page(const Store& store, const std::string& sweep);

// report_page + write_file_atomically.
void write_report(Store& store, const std::string& sweep, const std::string& out_path);

// report_page + write_own_file_atomically: a sweep's own OUT/NAME/report.html.
void write_own_report(Store& store, const std::string& sweep, const std::filesystem::path& path);

// Writes `text` to `path` through a temporary file in the same directory and a rename; creates
// the directory when missing. Throws sweep::Error (with the OS's reason) on failure, leaving the
// file as it was. For every file a command writes for the user (a report, an export). A file it
// replaces keeps its mode; a symbolic link is followed (the link stays); a device or a pipe is
// written to as it is (a full one fails), never replaced.
void write_file_atomically(const std::filesystem::path& path, std::string_view text);

// write_file_atomically for a file sweep writes on its own inside a sweep's directory (its
// report.html), under common/own_file.h's rule: a symbolic link, a FIFO or a device at `path` is
// refused with a sweep::Error naming it, never followed or written to (a link that appears after
// the check is replaced by the rename, its target untouched).
void write_own_file_atomically(const std::filesystem::path& path, std::string_view text);

}  // namespace sweep::reports
