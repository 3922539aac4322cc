// constraint.h: the small language of sweep.constraints, what it accepts and what it refuses.
#include "sweep/config/constraint.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace sweep::config {
namespace {

Constraint parsed(const char* text) {
  std::string why;
  const std::optional<Constraint> c = parse_constraint(text, why);
  EXPECT_TRUE(c) << text << ": " << why;
  return c.value_or(Constraint{});
}

TEST(Constraint, ReadsEachOperatorAndNumberSpelling) {
  const Constraint a = parsed("params <= 2e6");
  EXPECT_EQ(a.name, "params");
  EXPECT_EQ(a.op, ConstraintOp::less_equal);
  EXPECT_EQ(a.bound, 2e6);
  EXPECT_EQ(parsed("val_latency_ms<1.5").op, ConstraintOp::less);
  EXPECT_EQ(parsed("  val/acc >  0.9 ").name, "val/acc");
  EXPECT_EQ(parsed("x >= -3").bound, -3);
  EXPECT_EQ(parsed("x >= +3").op, ConstraintOp::greater_equal);
  EXPECT_EQ(parsed("x > .5").bound, 0.5);
  EXPECT_EQ(parsed("params <= 2e6").text(), "params <= 2e+06");
  EXPECT_EQ(parsed("loss<0.25").text(), "loss < 0.25");
}

TEST(Constraint, RefusesAnythingElseQuotingTheText) {
  for (const char* bad : {"", "params", "params == 3", "params != 3", "params <= ", "3 >= params",
                          "params <= 2e6 <= 3", "params <= abc", "params <= nan", "params <= inf",
                          "params <= 1e999", "params + 1 <= 3", "params => 3", "params =< 3",
                          "params <= 3 and x < 2", "params<<3", "<= 3"}) {
    std::string why;
    EXPECT_FALSE(parse_constraint(bad, why)) << bad;
    EXPECT_NE(why.find(std::string("got '") + bad + "'"), std::string::npos) << why;
    EXPECT_NE(why.find("<, <=, >, >="), std::string::npos) << why;
  }
  std::string why;
  EXPECT_FALSE(parse_constraint("params\x01 <= 3", why));
  EXPECT_EQ(why.find('\x01'), std::string::npos) << "control bytes are shown escaped";
}

TEST(Constraint, HoldsAndViolationAgreeAtTheBound) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const Constraint le = parsed("x <= 2"), lt = parsed("x < 2"), ge = parsed("x >= 2"),
                   gt = parsed("x > 2");
  EXPECT_TRUE(le.holds(2));
  EXPECT_FALSE(lt.holds(2));
  EXPECT_TRUE(ge.holds(2));
  EXPECT_FALSE(gt.holds(2));
  EXPECT_EQ(le.violation(2), 0);
  EXPECT_GT(lt.violation(2), 0);
  EXPECT_EQ(le.violation(5), 3);
  EXPECT_EQ(ge.violation(-1), 3);
  EXPECT_EQ(gt.violation(7), 0);
  for (const Constraint& c : {le, lt, ge, gt}) {
    EXPECT_FALSE(c.holds(nan));
    EXPECT_TRUE(std::isinf(c.violation(nan)));
  }
}

}  // namespace
}  // namespace sweep::config
