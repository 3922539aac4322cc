/*
 * text_table.h — the tables the CLI prints (`sweep list`, `show`, `status`, `fetch`): a header row
 * of upper-case column names, then one row per item, every column padded to its widest cell, so
 * that every table reads alike and `column`/`awk` can split it.
 *
 *   std::vector<std::vector<std::string>> rows = {{"TRIAL", "STATE"}};
 *   rows.push_back({"0", "completed"});
 *   print_table(std::cout, rows);
 */
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "common/format.h"
#include "common/json.h"

namespace sweep::cli {

// Columns padded to their widest cell plus two spaces; the last column is not padded and no line
// ends in spaces. Cells hold user text (names, parameter values, errors): control bytes are shown
// escaped (printable()).
void print_table(std::ostream& out, std::vector<std::vector<std::string>> rows);

// Significant digits per parameter for a table (or a line) of these trials' parameters: the
// fewest (3 to 6) that tell apart the floating-point values of each parameter, so a random
// draw reads 0.00316, not 0.0031622776601683794 (run::param_digits over every key of `params`).
ParamDigits table_digits(const std::vector<const Json*>& params);

}  // namespace sweep::cli
