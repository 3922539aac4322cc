// common/utf8.h: where the first byte that is not UTF-8 is, and text made UTF-8 by U+FFFD.
#include "common/utf8.h"

#include <gtest/gtest.h>

namespace sweep {
namespace {

const std::string kReplacement = "\xEF\xBF\xBD";

TEST(Utf8, ValidTextIsKeptAsItIs) {
  const std::string text = "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 loss";
  EXPECT_EQ(invalid_utf8_at(text), std::string::npos);
  EXPECT_EQ(valid_utf8(text), text);
  EXPECT_EQ(valid_utf8(""), "");
}

TEST(Utf8, EachByteThatStartsNoSequenceBecomesUPlusFffd) {
  EXPECT_EQ(valid_utf8("\xff\xfe"), kReplacement + kReplacement);
  EXPECT_EQ(valid_utf8("a\xc0\xaf"
                       "b"),
            "a" + kReplacement + kReplacement + "b");  // overlong
  EXPECT_EQ(valid_utf8("ab\xed\xa0\x80"), "ab" + kReplacement + kReplacement + kReplacement);
  EXPECT_EQ(valid_utf8("x\xe2\x82"), "x" + kReplacement + kReplacement);  // cut short
  const std::string mixed = valid_utf8("\xff\xc3\xa9\x80");
  EXPECT_EQ(mixed, kReplacement + "\xc3\xa9" + kReplacement);
  EXPECT_EQ(invalid_utf8_at(mixed), std::string::npos);
}

}  // namespace
}  // namespace sweep
