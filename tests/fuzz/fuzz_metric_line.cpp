/*
 * fuzz_metric_line.cpp — fuzzes the reader of an external trainer's metric lines
 * (scheduler/metric_line.h) on arbitrary bytes: every line such a trainer prints reaches it.
 *
 * Besides crashes, sanitizer reports and hangs, it checks what the reader returns:
 *   - a metric line has values, a step and epoch in [0, 2^53], and no problem; a refused line
 *     (problem set) has nothing else;
 *   - differentially, against nlohmann's strict JSON parser: a line that parser reads as an
 *     object gets the same numeric members from ours (the last value of a repeated name), or,
 *     when there are none, is not a metric line. Ours accepts more (NaN, Infinity), never less,
 *     but for a numeric member with an empty name, which the store cannot keep: refused.
 */
#include <cmath>
#include <map>
#include <string>

#include "common/json.h"
#include "fuzz_target.h"
#include "scheduler/metric_line.h"

namespace {

using sweep::scheduler::kMaxStep;
using sweep::scheduler::MetricLine;

void check_shape(const MetricLine& m) {
  if (!m.problem.empty()) {
    fuzz_require(!m.is_metric_line && m.values.empty() && !m.step && !m.epoch && !m.epoch_position,
                 "a refused line records nothing");
    return;
  }
  if (!m.is_metric_line) {
    fuzz_require(m.values.empty() && !m.step && !m.epoch && !m.epoch_position,
                 "a line that is not a metric line records nothing");
    return;
  }
  fuzz_require(!m.values.empty(), "a metric line has a value");
  if (m.step) fuzz_require(*m.step >= 0 && *m.step <= kMaxStep, "step in [0, 2^53]");
  if (m.epoch) fuzz_require(*m.epoch >= 0 && *m.epoch <= kMaxStep, "epoch in [0, 2^53]");
  if (m.epoch_position)
    fuzz_require(std::isfinite(*m.epoch_position) && *m.epoch_position >= 0 &&
                     *m.epoch_position != std::floor(*m.epoch_position),
                 "an epoch position is a finite fraction");
  fuzz_require(!(m.epoch && m.epoch_position), "an epoch is whole or a position, not both");
}

void check_against_strict_json(const std::string& text, const MetricLine& m) {
  // nlohmann's reader stops at a NUL byte as at the end of input; ours (rightly) does not.
  if (text.find('\0') != std::string::npos) return;
  const sweep::Json strict = sweep::Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (strict.is_discarded() || !strict.is_object()) return;
  std::map<std::string, double> expected;
  for (const auto& [name, value] : strict.items())
    if (name != "step" && name != "epoch" && value.is_number())
      expected[name] = value.get<double>();
  if (expected.empty()) {
    fuzz_require(!m.is_metric_line && m.problem.empty(),
                 "an object without numeric members is not a metric line");
    return;
  }
  if (!m.problem.empty()) {
    fuzz_require(strict.contains("step") || strict.contains("epoch") || expected.contains(""),
                 "only a bad step or epoch, or a metric without a name, refuses a valid JSON "
                 "object");
    return;
  }
  fuzz_require(!expected.contains(""), "a metric without a name is refused");
  fuzz_require(m.is_metric_line, "a JSON object with numeric members is a metric line");
  std::map<std::string, double> got(m.values.begin(), m.values.end());
  fuzz_require(got.size() == m.values.size(), "each name is recorded once");
  fuzz_require(got == expected, "the numeric members are those a strict JSON parser reads");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > kFuzzMaxLen) return -1;
  const std::string text(reinterpret_cast<const char*>(data), size);
  const MetricLine m = sweep::scheduler::parse_metric_line(text);
  check_shape(m);
  check_against_strict_json(text, m);
  return 0;
}
