/*
 * json.h — sweep's one JSON type.
 *
 * nlohmann's ordered_json: objects keep the order they were built or read in, so a sweep's
 * parameters stay in the file's order from the config through the scheduler, the store, the CLI
 * and the report, and no value crosses a boundary through a dump-and-parse to change its type.
 * (Comparison is order-sensitive: two objects are equal when their members are, in order.)
 */
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace sweep {

using Json = nlohmann::ordered_json;

}  // namespace sweep

// Json's members are compiled once, in common/json.cpp (the sweep_json library), not again in
// every file that uses them: this declaration tells each including file to use that copy.
extern template class nlohmann::basic_json<nlohmann::ordered_map>;

namespace sweep {

// `value` as JSON text; a string with bytes that are not UTF-8 is written with U+FFFD for them
// instead of throwing (nlohmann's default), so that a store written before such text was cleaned
// at its source (common/utf8.h) still exports. Every JSON that leaves sweep goes through here.
inline std::string json_text(const Json& value, int indent = -1) {
  return value.dump(indent, ' ', false, Json::error_handler_t::replace);
}

}  // namespace sweep
