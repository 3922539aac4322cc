/*
 * text_table.cpp — see text_table.h.
 */
#include "sweep/cli/text_table.h"

#include <algorithm>

#include "sweep/run/progress_table.h"

namespace sweep::cli {

void print_table(std::ostream& out, std::vector<std::vector<std::string>> rows) {
  for (auto& row : rows)
    for (auto& cell : row) cell = printable(cell);
  std::vector<std::size_t> widths;
  for (const auto& row : rows)
    for (std::size_t c = 0; c < row.size(); ++c) {
      if (widths.size() <= c) widths.push_back(0);
      widths[c] = std::max(widths[c], row[c].size());
    }
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t c = 0; c < row.size(); ++c) {
      line += row[c];
      if (c + 1 < row.size()) line += std::string(widths[c] - row[c].size() + 2, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out << line << "\n";
  }
}

ParamDigits table_digits(const std::vector<const Json*>& params) {
  std::vector<std::string> keys;
  for (const Json* p : params)
    if (p && p->is_object())
      for (auto it = p->begin(); it != p->end(); ++it)
        if (std::find(keys.begin(), keys.end(), it.key()) == keys.end()) keys.push_back(it.key());
  return run::param_digits(keys, params);
}

}  // namespace sweep::cli
