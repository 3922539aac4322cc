// The external trainer's metric lines: JSON objects, Python's NaN / Infinity tokens, steps that
// must be whole numbers in range, and anything else left to the log.
#include "scheduler/metric_line.h"

#include <gtest/gtest.h>

#include <cmath>

namespace sweep::scheduler {
namespace {

TEST(MetricLine, NumbersOfAnObjectInTheLinesOrder) {
  const MetricLine m = parse_metric_line(
      R"(  {"step": 40, "epoch": 2, "val_acc": 0.91, "loss": 1e-3, "tag": "x", "ok": true, "n": null} )");
  ASSERT_TRUE(m.is_metric_line) << m.problem;
  EXPECT_EQ(m.step, 40);
  EXPECT_EQ(m.epoch, 2);
  ASSERT_EQ(m.values.size(), 2u);
  EXPECT_EQ(m.values[0].first, "val_acc");
  EXPECT_DOUBLE_EQ(m.values[0].second, 0.91);
  EXPECT_EQ(m.values[1].first, "loss");
  EXPECT_DOUBLE_EQ(m.values[1].second, 1e-3);
}

// A UTF-8 byte order mark before the object (a first line written with utf-8-sig) is skipped, as
// JSON readers skip it; anywhere else it is text. The fuzzer found the first case read as a log
// line (tests/fuzz/regressions/metric_line/utf8-byte-order-mark-first).
TEST(MetricLine, AByteOrderMarkBeforeTheObjectIsSkipped) {
  const MetricLine m = parse_metric_line("\xEF\xBB\xBF{\"step\": 3, \"loss\": 0.5}");
  ASSERT_TRUE(m.is_metric_line) << m.problem;
  EXPECT_EQ(m.step, 3);
  ASSERT_EQ(m.values.size(), 1u);
  EXPECT_DOUBLE_EQ(m.values[0].second, 0.5);
  EXPECT_FALSE(parse_metric_line(" \xEF\xBB\xBF{\"loss\": 0.5}").is_metric_line);
  EXPECT_FALSE(parse_metric_line("\xEF\xBB{\"loss\": 0.5}").is_metric_line);
}

TEST(MetricLine, PythonsNanAndInfinityTokensAreNumbers) {
  const MetricLine m =
      parse_metric_line(R"({"loss": NaN, "a": Infinity, "b": -Infinity, "c": "NaN", "d": 2})");
  ASSERT_TRUE(m.is_metric_line);
  ASSERT_EQ(m.values.size(), 4u);  // "c" is a string: not a metric
  EXPECT_TRUE(std::isnan(m.values[0].second));
  EXPECT_EQ(m.values[1].second, INFINITY);
  EXPECT_EQ(m.values[2].second, -INFINITY);
  EXPECT_EQ(m.values[3].first, "d");
}

TEST(MetricLine, StepsMustBeWholeNumbersInRange) {
  for (const char* bad :
       {R"({"step": 1.5, "loss": 1})", R"({"step": -1, "loss": 1})", R"({"step": 1e30, "loss": 1})",
        R"({"step": 9223372036854775808, "loss": 1})", R"({"step": NaN, "loss": 1})",
        R"({"step": "10", "loss": 1})", R"({"epoch": -2, "loss": 1})",
        R"({"epoch": Infinity, "loss": 1})"}) {
    const MetricLine m = parse_metric_line(bad);
    EXPECT_FALSE(m.is_metric_line) << bad;
    EXPECT_FALSE(m.problem.empty()) << bad;
    EXPECT_TRUE(m.values.empty()) << bad;
  }
  EXPECT_EQ(parse_metric_line(R"({"step": 9007199254740992, "loss": 1})").step, 9007199254740992);
  EXPECT_EQ(parse_metric_line(R"({"step": 3.0, "loss": 1})").step, 3);
  EXPECT_EQ(parse_metric_line(R"({"step": 1.5, "loss": 1})").problem,
            "\"step\" must be a whole number from 0 to 2^53, got 1.5");
  // The step as written (#75: 2^63 - 1 was said as the double it rounds to, 9223372036854775808).
  EXPECT_EQ(parse_metric_line(R"({"step": 9223372036854775807, "loss": 1})").problem,
            "\"step\" must be a whole number from 0 to 2^53, got 9223372036854775807");
  EXPECT_EQ(parse_metric_line(R"({"step": 1e30, "loss": 1})").problem,
            "\"step\" must be a whole number from 0 to 2^53, got 1e30");
  EXPECT_EQ(parse_metric_line(R"({"epoch": -2.50, "loss": 1})").problem,
            "\"epoch\" must be a number from 0 to 2^53, got -2.50");
}

// Issue 42's hostile pass, #71: a member name with a lone surrogate escape made the whole line no
// metric line, in silence (the trial then failed "no metric line at all"). That member is left
// out with a note and the line's other metrics kept; with nothing else, the line is refused.
TEST(MetricLine, ALoneSurrogateInANameLeavesOnlyThatMemberOut) {
  const MetricLine m = parse_metric_line(R"({"step":1,"val_accuracy":0.5,"lone\ud800":1})");
  ASSERT_TRUE(m.is_metric_line);
  ASSERT_EQ(m.values.size(), 1u);
  EXPECT_EQ(m.values[0].first, "val_accuracy");
  EXPECT_EQ(m.step, 1);
  EXPECT_EQ(m.left_out, std::vector<std::string>{"lone\xEF\xBF\xBD"});
  EXPECT_NE(m.note.find("half a surrogate pair"), std::string::npos) << m.note;
  EXPECT_EQ(parse_metric_line(R"({"x\udc00y": 2, "loss": 1})").left_out,
            std::vector<std::string>{"x\xEF\xBF\xBDy"});
  EXPECT_EQ(parse_metric_line(R"({"a\ud800\u0041": 2, "loss": 1})").left_out,
            std::vector<std::string>{"a\xEF\xBF\xBD"
                                     "A"});
  const MetricLine only = parse_metric_line(R"({"lone\ud800": 1})");
  EXPECT_FALSE(only.is_metric_line);
  EXPECT_NE(only.problem.find("half a surrogate pair"), std::string::npos) << only.problem;
  const MetricLine pair = parse_metric_line(R"({"\ud83d\ude00": 1})");
  ASSERT_EQ(pair.values.size(), 1u);
  EXPECT_EQ(pair.values[0].first, "\xF0\x9F\x98\x80");
  EXPECT_TRUE(pair.left_out.empty());
  EXPECT_TRUE(parse_metric_line(R"({"tag": "\ud800", "loss": 1})").is_metric_line);
}

// A numeric member with an empty name refuses the line, with the reason: the store keeps metrics by
// name and refused the point, which stopped the sweep as if its database could not be written.
TEST(MetricLine, AnEmptyNameRefusesTheLine) {
  const MetricLine m = parse_metric_line(R"({"step": 1, "": 0.1, "val_accuracy": 0.5})");
  EXPECT_FALSE(m.is_metric_line);
  EXPECT_EQ(m.problem, "a metric name is empty");
  EXPECT_TRUE(m.values.empty());
  EXPECT_TRUE(parse_metric_line(R"({"": "text", "loss": 1})").is_metric_line);  // no number there
}

TEST(MetricLine, AFractionalEpochIsAPositionWithinTraining) {
  const MetricLine m = parse_metric_line(R"({"epoch": 2.25, "loss": 1})");
  ASSERT_TRUE(m.is_metric_line) << m.problem;
  EXPECT_FALSE(m.epoch.has_value());
  EXPECT_EQ(m.epoch_position, 2.25);
}

TEST(MetricLine, NestedValuesAndEscapedNamesAreRead) {
  const MetricLine m = parse_metric_line(
      R"({"cfg": {"lr": [1, {"x": "}]"}]}, "a\"b\u00e9\ud83d\ude00": 1, "list": [1, 2]})");
  ASSERT_TRUE(m.is_metric_line);
  ASSERT_EQ(m.values.size(), 1u);
  EXPECT_EQ(m.values[0].first, "a\"b\xc3\xa9\xf0\x9f\x98\x80");
}

TEST(MetricLine, ARepeatedNameKeepsItsLastValue) {
  const MetricLine m = parse_metric_line(R"({"loss": 1, "acc": 2, "loss": 3})");
  ASSERT_EQ(m.values.size(), 2u);
  EXPECT_EQ(m.values[0], (std::pair<std::string, double>{"loss", 3}));
}

TEST(MetricLine, WhatIsNotAMetricLineStaysALogLine) {
  for (const char* text :
       {"", "plain text", "{", "{}", R"({"step": 3})", R"({"note": "x"})", R"({"a": 1} trailing)",
        R"({"a": 01})", R"({"a": 1.})", R"({"a": .5})", R"({"a": +1})", R"({'a': 1})",
        R"({"a": nan})", R"([1, 2])", R"({"a": 1,})", "{\"a\": 1, \"b\": \"x\ty\"}",
        R"({"a": "\ud800"})", R"({"a": tru})"}) {
    const MetricLine m = parse_metric_line(text);
    EXPECT_FALSE(m.is_metric_line) << text;
    EXPECT_TRUE(m.problem.empty()) << text;
  }
}

TEST(MetricLine, HugeAndDeepInputsAreFine) {
  std::string deep =
      "{\"x\": " + std::string(100000, '[') + std::string(100000, ']') + ", \"a\": 1}";
  EXPECT_TRUE(parse_metric_line(deep).is_metric_line);
  EXPECT_EQ(parse_metric_line(R"({"a": 1e999})").values[0].second, INFINITY);
}

// Found by fuzzing: a repeated name whose last value is not a number kept its earlier number.
TEST(MetricLine, ARepeatedNameTakesItsLastValueEvenWhenThatIsNotANumber) {
  const MetricLine m =
      parse_metric_line(R"({"lr": 1e-3, "loss": 2, "lr": null, "acc": 1, "acc": 3})");
  ASSERT_TRUE(m.is_metric_line);
  ASSERT_EQ(m.values.size(), 2u);
  EXPECT_EQ(m.values[0], (std::pair<std::string, double>("loss", 2)));
  EXPECT_EQ(m.values[1], (std::pair<std::string, double>("acc", 3)));
  EXPECT_FALSE(parse_metric_line(R"({"lr": 1, "lr": "x"})").is_metric_line);
}

// Found by fuzzing (tests/fuzz/regressions/metric_line): a number too small for a double read as
// infinity, so a tiny value would have looked like a divergence. Too small is ±0, too large ±inf,
// wherever the digits and the point sit.
TEST(MetricLine, OutOfRangeNumbersUnderflowToZeroAndOverflowToInfinity) {
  const auto value = [](const std::string& number) {
    const MetricLine m = parse_metric_line("{\"a\": " + number + "}");
    EXPECT_TRUE(m.is_metric_line) << number;
    return m.values.empty() ? NAN : m.values[0].second;
  };
  EXPECT_EQ(value("1e-320891234567890"), 0.0);
  EXPECT_EQ(value("1e-400"), 0.0);
  EXPECT_TRUE(std::signbit(value("-1e-400")));
  EXPECT_EQ(value("0.000000001e-320"), 0.0);
  EXPECT_EQ(value("1" + std::string(400, '0') + "e-5"), INFINITY);
  EXPECT_EQ(value("123.5e400"), INFINITY);
  EXPECT_EQ(value("-1e99999999999999999999"), -INFINITY);
  EXPECT_EQ(value("0." + std::string(400, '0') + "1e-80"), 0.0);
  EXPECT_EQ(value("4.9e-324"), 4.9e-324);  // the smallest denormal is in range
}

}  // namespace
}  // namespace sweep::scheduler
