/*
 * command_template.cpp — the command line template → argv, without a shell.
 *
 * Splitting happens BEFORE substitution: quotes and spaces in the template shape the argv, while
 * whatever a parameter's value contains (spaces, quotes, `;`, `$(...)`) lands inside one argument
 * untouched. That is the whole defence against shell injection, so no code path here ever hands a
 * string to /bin/sh.
 */
#include <string>
#include <vector>

#include "common/check.h"
#include "common/format.h"
#include "common/json.h"
#include "scheduler/command_trial.h"

namespace sweep::scheduler {

std::vector<std::string> split_command_template(const std::string& argv_template) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  char quote = 0;  // '\'' or '"' while inside quotes
  for (std::size_t i = 0; i < argv_template.size(); ++i) {
    const char c = argv_template[i];
    if (quote == '\'') {
      if (c == '\'')
        quote = 0;
      else
        word += c;
    } else if (quote == '"') {
      if (c == '"') {
        quote = 0;
      } else if (c == '\\' && i + 1 < argv_template.size() &&
                 (argv_template[i + 1] == '"' || argv_template[i + 1] == '\\')) {
        word += argv_template[++i];
      } else {
        word += c;
      }
    } else if (c == ' ' || c == '\t' || c == '\n') {
      if (in_word) words.push_back(std::move(word));
      word.clear();
      in_word = false;
    } else {
      in_word = true;
      if (c == '\'' || c == '"') {
        quote = c;
      } else if (c == '\\') {
        if (i + 1 >= argv_template.size())
          throw Error("command: the template ends with a lone backslash: " + argv_template);
        word += argv_template[++i];
      } else {
        word += c;
      }
    }
  }
  if (quote)
    throw Error(std::string("command: unterminated ") + quote + " quote in: " + argv_template);
  if (in_word) words.push_back(std::move(word));
  if (words.empty()) throw Error("command: the command line is empty");
  return words;
}

namespace {

// A parameter's text as the program should see it: strings bare, numbers in JSON's shortest form.
const sweep::Json* find_param(const sweep::Json& params, const std::string& key) {
  if (!params.is_object()) return nullptr;
  if (auto it = params.find(key); it != params.end()) return &*it;  // flat "training.lr"
  const sweep::Json* node = &params;                                // nested training: {lr: ..}
  std::size_t start = 0;
  for (;;) {
    const std::size_t dot = key.find('.', start);
    const std::string part = key.substr(start, dot == std::string::npos ? dot : dot - start);
    if (!node->is_object()) return nullptr;
    auto it = node->find(part);
    if (it == node->end()) return nullptr;
    node = &*it;
    if (dot == std::string::npos) return node;
    start = dot + 1;
  }
}

std::string known_keys(const sweep::Json& params) {
  std::string list = "trial_id, trial_number, trial_name, trial_dir, device";
  if (params.is_object())
    for (const auto& [key, value] : params.items()) list += ", " + key;
  return list;
}

}  // namespace

std::string substitute_placeholders(const std::string& text, const TrialSpec& spec,
                                    const std::string& trial_dir, const Device& device) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if ((c == '{' || c == '}') && i + 1 < text.size() && text[i + 1] == c) {
      out += c;  // {{ or }}
      ++i;
      continue;
    }
    if (c == '}') throw Error("command: unmatched '}' in: " + text + " (write }} for a brace)");
    if (c != '{') {
      out += c;
      continue;
    }
    const std::size_t close = text.find('}', i + 1);
    if (close == std::string::npos)
      throw Error("command: unmatched '{' in: " + text + " (write {{ for a brace)");
    const std::string key = text.substr(i + 1, close - i - 1);
    i = close;
    if (key == "trial_id") {
      out += std::to_string(spec.id);
    } else if (key == "trial_number") {
      out += std::to_string(spec.number);
    } else if (key == "trial_name") {
      out += spec.name;
    } else if (key == "device") {
      out += device.label();
    } else if (key == "trial_dir") {
      if (trial_dir.empty())
        throw Error("command: {trial_dir} is used but no trial directory is configured");
      out += trial_dir;
    } else if (const sweep::Json* value = find_param(spec.params, key)) {
      out += value_text(*value);
    } else {
      throw Error("command: placeholder {" + key + "} names no parameter of trial " +
                  std::to_string(spec.id) + " (known: " + known_keys(spec.params) + ")");
    }
  }
  return out;
}

std::string escape_placeholders(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    out += c;
    if (c == '{' || c == '}') out += c;
  }
  return out;
}

std::vector<std::string> expand_command(const CommandSpec& command, const TrialSpec& spec,
                                        const Device& device) {
  const std::string trial_dir = command.trial_dir.empty()
                                    ? std::string()
                                    : substitute_placeholders(command.trial_dir, spec, "", device);
  std::vector<std::string> argv = split_command_template(command.argv_template);
  for (auto& word : argv) word = substitute_placeholders(word, spec, trial_dir, device);
  return argv;
}

}  // namespace sweep::scheduler
