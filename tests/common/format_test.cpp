// printable(): user text echoed to a terminal carries no control bytes.
#include "common/format.h"

#include <gtest/gtest.h>

namespace sweep {
namespace {

TEST(Printable, ControlBytesAreEscapedTextIsKept) {
  EXPECT_EQ(printable("plain text, tabs\tstay"), "plain text, tabs\tstay");
  EXPECT_EQ(printable("bad\x1b[2J\x07name"), "bad\\x1b[2J\\x07name");
  EXPECT_EQ(printable("a\nb\rc"), "a\\x0ab\\x0dc");
  EXPECT_EQ(printable("a\nb", true), "a\nb");
  EXPECT_EQ(printable(std::string("nul\0byte", 8)), "nul\\x00byte");
  EXPECT_EQ(printable("del\x7f"), "del\\x7f");
  EXPECT_EQ(printable("UTF-8 \xc3\xa9t\xc3\xa9 \xe2\x86\x92"),
            "UTF-8 \xc3\xa9t\xc3\xa9 \xe2\x86\x92");
}

// A trial of a sweep without parameters reads "(base config)" once after a line's text (the
// summary printed "((base config))").
TEST(ParamsText, ABaseConfigIsParenthesisedOnce) {
  EXPECT_EQ(params_text(Json::object()), "(base config)");
  EXPECT_EQ(in_parentheses(params_text(Json::object())), " (base config)");
  EXPECT_EQ(in_parentheses(params_text(Json{{"lr", 0.5}})), " (lr=0.5)");
}

}  // namespace
}  // namespace sweep
