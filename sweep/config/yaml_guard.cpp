/*
 * yaml_guard.cpp — one pass over yaml-cpp's parser events (YAML::Parser + EventHandler).
 *
 * Sizes: every node counts 1, a collection 1 plus its children, an alias the size of the node its
 * anchor named. The running total of nodes seen (aliases expanded) only grows, so the first event
 * that takes it past the limit stops the parse at once (by an exception out of the handler):
 * the bomb is never expanded, not even in the counting.
 */
#include "sweep/config/yaml_guard.h"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/parser.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>
#include <unordered_map>
#include <vector>

namespace sweep::config {

namespace {

struct TooLarge {
  YAML::Mark mark;
};

bool is_core_tag(const std::string& tag) {
  // "" and "?": no tag (plain scalar); "!": quoted scalar. YAML's own types, in either spelling.
  if (tag.empty() || tag == "?" || tag == "!") return true;
  static const char* const kCore[] = {"str", "int", "float", "bool", "null", "seq", "map"};
  for (const char* name : kCore)
    if (tag == std::string("tag:yaml.org,2002:") + name || tag == std::string("!!") + name)
      return true;
  return false;
}

class Guard : public YAML::EventHandler {
 public:
  Guard(const std::string& file, Diagnostics& diagnostics)
      : file_(file), diagnostics_(diagnostics) {}

  void OnDocumentStart(const YAML::Mark& mark) override {
    if (++documents_ == 2)
      error(mark,
            "a config is one YAML document, but a second one starts here ('---'): "
            "put everything in one, or split it into two files");
  }
  void OnDocumentEnd() override {}

  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    node_done(mark, anchor, 1, nullptr);
  }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    const auto it = anchor_sizes_.find(anchor);
    node_done(mark, 0, it == anchor_sizes_.end() ? 1 : it->second, nullptr);
  }
  void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                const std::string& value) override {
    check_tag(mark, tag);
    node_done(mark, anchor, 1, &value);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    check_tag(mark, tag);
    stack_.push_back({false, 1, anchor, mark, {}, true});
    grow(mark, 1);
  }
  void OnSequenceEnd() override { close(); }
  void OnMapStart(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    check_tag(mark, tag);
    stack_.push_back({true, 1, anchor, mark, {}, true});
    grow(mark, 1);
  }
  void OnMapEnd() override { close(); }

 private:
  struct Frame {
    bool is_map;
    std::size_t size;  // this collection's nodes so far, aliases expanded
    YAML::anchor_t anchor;
    YAML::Mark mark;
    std::map<std::string, int> keys;  // key → line of its first appearance (maps)
    bool expect_key;
  };

  void error(const YAML::Mark& mark, const std::string& text) {
    Location where;
    where.file = file_;
    if (mark.line >= 0) {
      where.line = mark.line + 1;
      where.column = mark.column + 1;
    }
    diagnostics_.error(where, "", text);
    ok_ = false;
  }

  void check_tag(const YAML::Mark& mark, const std::string& tag) {
    if (!is_core_tag(tag))
      error(mark, "unknown tag '" + tag +
                      "': a config uses plain YAML values (quote the text if the '!' is part of "
                      "it)");
  }

  void grow(const YAML::Mark& mark, std::size_t nodes) {
    total_ += nodes;
    if (total_ > kMaxExpandedNodes) throw TooLarge{mark};
  }

  // A complete node of `size` nodes: counts it, remembers an anchored node's size, and in a map
  // checks a key (scalar `key_text`) against the keys before it.
  void node_done(const YAML::Mark& mark, YAML::anchor_t anchor, std::size_t size,
                 const std::string* key_text) {
    if (anchor != 0) anchor_sizes_[anchor] = size;
    grow(mark, size);
    if (stack_.empty()) return;  // a document that is one scalar
    Frame& parent = stack_.back();
    parent.size += size;
    if (!parent.is_map) return;
    if (parent.expect_key && key_text) {
      const auto [it, added] = parent.keys.emplace(*key_text, mark.line + 1);
      if (!added)
        error(mark, "key '" + *key_text + "' appears twice in this map (first at line " +
                        std::to_string(it->second) + "): remove one");
    }
    parent.expect_key = !parent.expect_key;
  }

  void close() {
    Frame frame = std::move(stack_.back());
    stack_.pop_back();
    if (frame.anchor != 0) anchor_sizes_[frame.anchor] = frame.size;
    if (stack_.empty()) return;  // the root: its nodes were counted as they came
    Frame& parent = stack_.back();
    parent.size += frame.size;  // already in total_ (counted as its children arrived)
    if (parent.is_map) parent.expect_key = !parent.expect_key;
  }

  const std::string& file_;
  Diagnostics& diagnostics_;
  std::vector<Frame> stack_;
  std::unordered_map<YAML::anchor_t, std::size_t> anchor_sizes_;
  std::size_t total_ = 0;
  int documents_ = 0;
  bool ok_ = true;

 public:
  bool ok() const { return ok_; }
};

}  // namespace

bool check_yaml_text(const std::string& file, const std::string& text, Diagnostics& diagnostics) {
  Location whole;
  whole.file = file;
  if (text.size() > kMaxConfigBytes) {
    diagnostics.error(whole, "",
                      "the file is larger than " + std::to_string(kMaxConfigBytes >> 20) +
                          " MiB; a sweep config is a few KiB of YAML (is this the right file?)");
    return false;
  }
  if (const auto nul = text.find('\0'); nul != std::string::npos) {
    diagnostics.error(whole, "",
                      "the file holds a NUL byte (at byte " + std::to_string(nul + 1) +
                          "): it is not a text file, so not a YAML config");
    return false;
  }
  if (const std::size_t bad = invalid_utf8_at(text); bad != std::string::npos) {
    Location where = whole;
    const std::size_t line_start = text.rfind('\n', bad == 0 ? 0 : bad - 1);
    where.line = 1 + static_cast<int>(std::count(text.begin(), text.begin() + bad, '\n'));
    where.column =
        static_cast<int>(bad - (line_start == std::string::npos ? 0 : line_start + 1)) + 1;
    char hex[8];
    std::snprintf(hex, sizeof hex, "0x%02X", static_cast<unsigned char>(text[bad]));
    diagnostics.error(where, "",
                      std::string("byte ") + hex +
                          " is not UTF-8 text: a YAML config is UTF-8 (was the file saved in "
                          "another encoding?)");
    return false;
  }
  std::istringstream in(text);
  Guard guard(file, diagnostics);
  try {
    YAML::Parser parser(in);
    while (parser.HandleNextDocument(guard)) {
    }
  } catch (const TooLarge& e) {
    Location where = whole;
    if (e.mark.line >= 0) {
      where.line = e.mark.line + 1;
      where.column = e.mark.column + 1;
    }
    diagnostics.error(where, "",
                      "the YAML expands to more than " + std::to_string(kMaxExpandedNodes) +
                          " values once its aliases (*name) are expanded; a config needs far "
                          "fewer (aliases that nest aliases grow exponentially)");
    return false;
  } catch (const YAML::Exception& e) {
    Location where = whole;
    if (e.mark.line >= 0) {
      where.line = e.mark.line + 1;
      where.column = e.mark.column + 1;
    }
    diagnostics.error(where, "", yaml_syntax_error(text, e.mark.line, e.msg));
    return false;
  }
  return guard.ok();
}

std::string yaml_syntax_error(const std::string& text, int line, const std::string& message) {
  std::istringstream lines(text);
  std::string content;
  for (int n = 0; n <= line && std::getline(lines, content); ++n) {
    if (n < line - 1) continue;
    const std::size_t indent = content.find_first_not_of(" \t");
    if (content.substr(0, indent).find('\t') != std::string::npos)
      return "YAML syntax error: " + message + " (line " + std::to_string(n + 1) +
             " is indented with a tab: YAML indents with spaces only)";
  }
  return "YAML syntax error: " + message;
}

}  // namespace sweep::config
