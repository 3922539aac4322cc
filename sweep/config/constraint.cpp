/*
 * constraint.cpp — parsing and evaluating `sweep.constraints` entries.
 */
#include "sweep/config/constraint.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>

#include "common/format.h"

namespace sweep::config {
namespace {

bool name_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '/' ||
         c == '-';
}
void skip_spaces(std::string_view s, std::size_t& i) {
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
}

const char* op_text(ConstraintOp op) {
  switch (op) {
    case ConstraintOp::less:
      return "<";
    case ConstraintOp::less_equal:
      return "<=";
    case ConstraintOp::greater:
      return ">";
    case ConstraintOp::greater_equal:
      return ">=";
  }
  return "?";
}

}  // namespace

bool Constraint::holds(double value) const {
  switch (op) {
    case ConstraintOp::less:
      return value < bound;
    case ConstraintOp::less_equal:
      return value <= bound;
    case ConstraintOp::greater:
      return value > bound;
    case ConstraintOp::greater_equal:
      return value >= bound;
  }
  return false;
}

double Constraint::violation(double value) const {
  if (std::isnan(value)) return std::numeric_limits<double>::infinity();
  if (holds(value)) return 0;
  // A value on the bound of a strict comparison is infeasible by the smallest positive amount.
  return std::max(std::fabs(value - bound), std::numeric_limits<double>::min());
}

std::string Constraint::text() const { return name + " " + op_text(op) + " " + shortest(bound); }

std::optional<Constraint> parse_constraint(std::string_view text, std::string& why) {
  const std::string expected =
      "expected '<metric> <op> <number>' with op one of <, <=, >, >= (e.g. 'params <= 2e6'), got "
      "'" +
      printable(text) + "'";
  Constraint c;
  std::size_t i = 0;
  skip_spaces(text, i);
  if (i == text.size() || !name_start(text[i])) {
    why = expected;
    return std::nullopt;
  }
  const std::size_t name_begin = i;
  while (i < text.size() && name_char(text[i])) ++i;
  c.name = std::string(text.substr(name_begin, i - name_begin));
  skip_spaces(text, i);
  if (i < text.size() && (text[i] == '<' || text[i] == '>')) {
    const bool less = text[i] == '<';
    ++i;
    const bool equal = i < text.size() && text[i] == '=';
    if (equal) ++i;
    c.op = less ? (equal ? ConstraintOp::less_equal : ConstraintOp::less)
                : (equal ? ConstraintOp::greater_equal : ConstraintOp::greater);
  } else {
    why = expected;
    return std::nullopt;
  }
  skip_spaces(text, i);
  std::size_t end = text.size();
  while (end > i && (text[end - 1] == ' ' || text[end - 1] == '\t')) --end;
  const std::string_view number = text.substr(i, end - i);
  // from_chars takes no leading '+'; a bound may be written with one.
  const std::string_view digits = !number.empty() && number[0] == '+' ? number.substr(1) : number;
  const char* first = digits.data();
  const char* last = digits.data() + digits.size();
  const auto [ptr, ec] = std::from_chars(first, last, c.bound);
  if (digits.empty() || ec != std::errc() || ptr != last || !std::isfinite(c.bound)) {
    why = expected;
    return std::nullopt;
  }
  return c;
}

}  // namespace sweep::config
