/*
 * csv_table.cpp — CSV cells: the formula guard, then RFC 4180 quoting (csv_table.h).
 */
#include "sweep/cli/csv_table.h"

namespace sweep::cli {
namespace {

// What a spreadsheet takes as the start of a formula (OWASP's list).
bool starts_a_formula(std::string_view cell) {
  return !cell.empty() && std::string_view("=+-@\t\r").find(cell.front()) != std::string_view::npos;
}

}  // namespace

std::string csv_cell(std::string_view cell, bool number, const CsvOptions& options) {
  std::string text;
  if (!number && !options.raw && starts_a_formula(cell)) text = "'";
  text += cell;
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string quoted = "\"";
  for (const char c : text) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + "\"";
}

std::string csv_table(const ExportTable& table, const CsvOptions& options) {
  std::string text;
  const auto add_row = [&](const std::vector<std::string>& cells, const std::vector<bool>* number) {
    for (std::size_t i = 0; i < cells.size(); ++i) {
      const bool is_number = number && i < number->size() && (*number)[i];
      if (i) text += ',';
      text += csv_cell(cells[i], is_number, options);
    }
    text += "\n";
  };
  add_row(table.header, nullptr);
  for (std::size_t r = 0; r < table.rows.size(); ++r)
    add_row(table.rows[r], r < table.number.size() ? &table.number[r] : nullptr);
  return text;
}

}  // namespace sweep::cli
