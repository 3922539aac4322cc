/*
 * metric_line.h — one line an external trainer printed, read as metrics.
 *
 * A metric line is a JSON object on one line: every numeric member is a metric, "step" and
 * "epoch" place it. Python's json.dumps writes NaN, Infinity and -Infinity as bare tokens, which
 * strict JSON parsers refuse; they are accepted here (outside strings), so a diverging loss is
 * seen as the NaN it is instead of the whole line being dropped. A step must be a whole number
 * in [0, 2^53] (a double holds every such integer exactly; 1.5, -1, 1e30 and NaN are refused, with
 * the reason, rather than truncated or overflowed); an epoch likewise, except that a fractional
 * epoch is taken as a position within an epoch (epoch_position), as the built-in trainer reports
 * mid-epoch points. A numeric member whose name is empty refuses the line too. A numeric member
 * whose name holds a lone surrogate escape ("\ud800") is left out with a note, the line's other
 * metrics kept; with nothing else to keep, the line is refused with that reason.
 *
 * The parser is our own and small: it never throws, never recurses (nested values are skipped
 * by counting brackets) and reads each byte a bounded number of times, so any input is safe
 * (tests/fuzz runs it under libFuzzer).
 *
 *   MetricLine m = parse_metric_line(R"({"step": 40, "loss": NaN, "acc": 0.91})");
 *   // m.is_metric_line, m.step == 40, m.values == {{"loss", NaN}, {"acc", 0.91}}
 */
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sweep::scheduler {

struct MetricLine {
  bool is_metric_line = false;                         // a JSON object with a numeric member
  std::vector<std::pair<std::string, double>> values;  // in the line's order; NaN/±Inf allowed
  std::optional<std::int64_t> step, epoch;             // when given (and valid)
  std::optional<double> epoch_position;                // a fractional "epoch"
  std::string problem;  // non-empty: the line was refused, and why (for the trial's log)
  // Members whose value is no number ("high", true, null, a list): not metrics, but a trainer
  // that writes its sweep's metric so is told (command_trial.cpp). Filled for any JSON object.
  std::vector<std::string> not_numbers;
  // Numeric members left out of a metric line that is kept: their names hold a \u escape of a
  // lone UTF-16 surrogate (no Unicode character), decoded as U+FFFD.
  std::vector<std::string> left_out;
  std::string note;  // non-empty: what was left out of a kept line, and why (for the trial's log)
};

// The largest step or epoch accepted: every integer up to it is exact in a double.
inline constexpr double kMaxStep = 9007199254740992.0;  // 2^53

MetricLine parse_metric_line(std::string_view line);

}  // namespace sweep::scheduler
