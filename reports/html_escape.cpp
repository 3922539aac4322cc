/*
 * html_escape.cpp — entity escaping for HTML, and JSON that cannot close its <script> element.
 *
 * The non-obvious decision: the JSON pass rewrites bytes after sweep::Json has produced the
 * text. That is safe because '<', '>', '&' and the UTF-8 of U+2028 / U+2029 can only occur
 * inside JSON strings (never in JSON's own syntax), where their \u escapes mean the same.
 */
#include "reports/html_escape.h"

#include "common/json.h"

namespace sweep::reports {

std::string escape_html(std::string_view text) {
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  for (const char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string script_safe_json(const sweep::Json& value) {
  const std::string json = sweep::json_text(value);
  std::string out;
  out.reserve(json.size() + 64);
  for (std::size_t i = 0; i < json.size(); ++i) {
    const char c = json[i];
    if (c == '<') {
      out += "\\u003c";
    } else if (c == '>') {
      out += "\\u003e";
    } else if (c == '&') {
      out += "\\u0026";
    } else if (c == '\xE2' && i + 2 < json.size() && json[i + 1] == '\x80' &&
               (json[i + 2] == '\xA8' || json[i + 2] == '\xA9')) {
      out += json[i + 2] == '\xA8' ? "\\u2028" : "\\u2029";
      i += 2;
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace sweep::reports
