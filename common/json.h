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

namespace sweep {

using Json = nlohmann::ordered_json;

}  // namespace sweep
