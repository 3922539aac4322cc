/*
 * yaml_guard.h — what a config's YAML may be, checked on the parser's events before the text
 * becomes a tree.
 *
 * yaml-cpp loads happily what a config must not be: a second document (silently dropped), a key
 * written twice (the first wins), a tag such as !foo (ignored), and aliases that refer to
 * aliases, which expand exponentially once walked (a 1 KiB "billion laughs" file becomes
 * gigabytes). One pass over the parser's events sees all of these with their line and column,
 * before any tree is built or walked, so the rest of the config code may walk trees freely.
 *
 *   Diagnostics d;
 *   if (check_yaml_text("sweep.yaml", text, d)) root = YAML::Load(text);
 */
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "common/utf8.h"
#include "sweep/config/config_error.h"

namespace sweep::config {

// Limits on a config's text, so no input can take unbounded memory or time.
inline constexpr std::size_t kMaxConfigBytes = 1 << 20;  // 1 MiB: configs are a few KiB
// Nodes of the tree once every alias is expanded (the shipped configs have < 200).
inline constexpr std::size_t kMaxExpandedNodes = 250'000;

// Checks `text` (named `file` in messages): one document at most, no key twice in a map, no tag
// besides YAML's own (!!str, !!int, ...), aliases expanding to at most kMaxExpandedNodes nodes,
// no NUL byte, at most kMaxConfigBytes. Adds FILE:LINE:COL problems to `diagnostics` (a syntax
// error too) and returns false when there was any.
bool check_yaml_text(const std::string& file, const std::string& text, Diagnostics& diagnostics);

// "YAML syntax error: " + yaml-cpp's message about `text` (at 0-based `line`), and the tab when
// the line or the one before it is indented with one: yaml-cpp's words for that are "illegal
// map value" and the like.
std::string yaml_syntax_error(const std::string& text, int line, const std::string& message);

// YAML files are UTF-8 text; a name or value with another byte could not be stored as JSON.
using sweep::invalid_utf8_at;  // common/utf8.h

}  // namespace sweep::config
