/*
 * constraint.h — one entry of `sweep.constraints`: a metric or built-in quantity compared with a
 * number ("params <= 2e6", "val_latency_ms < 1.5").
 *
 * The language is deliberately small: a name, one of <, <=, >, >=, and a finite number, in that
 * order, with any spaces between. Anything else (==, two comparisons, arithmetic, a number
 * first) is refused with the text and what was expected, so that a constraint is never read as
 * something other than what the user meant. All constraints of a sweep must hold.
 */
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace sweep::config {

enum class ConstraintOp { less, less_equal, greater, greater_equal };

struct Constraint {
  std::string name;  // a metric name or built-in quantity
  ConstraintOp op = ConstraintOp::less_equal;
  double bound = 0;

  // Whether `value` satisfies it (a NaN never does).
  bool holds(double value) const;
  // How far `value` is from satisfying it: 0 when it holds, else a positive distance (+infinity
  // for NaN), so that among infeasible trials the nearer one ranks first (Optuna's rule for
  // constraint values: <= 0 is feasible).
  double violation(double value) const;
  // "params <= 2e+06": the canonical spelling (the bound in its shortest exact text), for messages
  // and the store.
  std::string text() const;
};

// Parses one constraint; on failure returns nullopt and sets `why` to a message that quotes the
// text and says what was expected.
std::optional<Constraint> parse_constraint(std::string_view text, std::string& why);

}  // namespace sweep::config
