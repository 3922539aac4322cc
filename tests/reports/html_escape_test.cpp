// Escaping for HTML text and for JSON embedded in <script>.
#include "reports/html_escape.h"

#include <gtest/gtest.h>

#include "common/json.h"

namespace sweep::reports {
namespace {

TEST(HtmlEscape, EscapesTheFiveSpecialCharacters) {
  EXPECT_EQ(escape_html("<a href=\"x\" title='y'>&</a>"),
            "&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;");
  EXPECT_EQ(escape_html("plain text, ünïcode"), "plain text, ünïcode");
  EXPECT_EQ(escape_html(""), "");
}

TEST(ScriptSafeJson, ScriptEndTagCannotCloseTheElement) {
  const std::string json = script_safe_json({{"name", "</script><script>alert(1)</script>"}});
  EXPECT_EQ(json.find('<'), std::string::npos);
  EXPECT_EQ(json.find('>'), std::string::npos);
  EXPECT_NE(json.find("\\u003c/script\\u003e"), std::string::npos);
  // Still the same JSON.
  EXPECT_EQ(sweep::Json::parse(json)["name"], "</script><script>alert(1)</script>");
}

TEST(ScriptSafeJson, CommentOpenersAmpersandsAndLineSeparatorsAreEscaped) {
  const std::string text = "<!-- & \xE2\x80\xA8 \xE2\x80\xA9 end";
  const std::string json = script_safe_json({{"t", text}});
  EXPECT_EQ(json.find("<!--"), std::string::npos);
  EXPECT_EQ(json.find('&'), std::string::npos);
  EXPECT_EQ(json.find("\xE2\x80\xA8"), std::string::npos);
  EXPECT_EQ(json.find("\xE2\x80\xA9"), std::string::npos);
  EXPECT_NE(json.find("\\u2028"), std::string::npos);
  EXPECT_NE(json.find("\\u2029"), std::string::npos);
  EXPECT_EQ(sweep::Json::parse(json)["t"], text);
}

TEST(ScriptSafeJson, InvalidUtf8IsReplacedNotThrown) {
  std::string json;
  ASSERT_NO_THROW(json = script_safe_json({{"bad", std::string("ok\xFF\xFEok")}}));
  EXPECT_NE(json.find("ok"), std::string::npos);
  EXPECT_TRUE(sweep::Json::parse(json)["bad"].is_string());
}

TEST(ScriptSafeJson, NonFiniteNumbersBecomeNull) {
  const std::string json = script_safe_json(
      {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(), 1.5});
  EXPECT_EQ(json, "[null,null,1.5]");
}

}  // namespace
}  // namespace sweep::reports
