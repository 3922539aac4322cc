/*
 * html_escape.h — text from the config or the database, made safe for the two places it goes.
 *
 * The non-obvious decision: the data the charts draw travels as JSON inside
 * <script type="application/json">. JSON escaping alone is not enough there: a string holding
 * "</script>" would end the element, and "<!--" changes how the HTML parser reads the rest. So
 * every '<', '>' and '&' in the JSON text becomes \u003c, \u003e, \u0026 (legal JSON escapes, only
 * ever inside strings), and U+2028 / U+2029 become \u2028 / \u2029 so the text is also valid as
 * a JavaScript literal. Invalid UTF-8 is replaced (U+FFFD) instead of aborting the report.
 */
#pragma once

#include <string>
#include <string_view>

#include "common/json.h"

namespace sweep::reports {

// For HTML text and attribute values: & < > " ' become entities.
std::string escape_html(std::string_view text);

// Compact JSON that can be pasted between <script ...> and </script> as is.
std::string script_safe_json(const sweep::Json& value);

}  // namespace sweep::reports
