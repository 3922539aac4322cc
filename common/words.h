/*
 * words.h — an enum's words: one table per enum, read both ways.
 *
 * Every enum that is written as text (in a config, in the store, in messages) has one table of
 * (value, word) rows; to_string, parsing, the list of allowed words and "did you mean" all read
 * that table, so no switch repeats it. The first row of a value is its name; later rows for the
 * same value are aliases a reader also accepts (cifar-10 for cifar10).
 *
 *   inline constexpr Word<Color> kColors[] = {{Color::red, "red"}, {Color::blue, "blue"}};
 *   constexpr Words<Color> words_of(Color) { return {kColors, std::size(kColors)}; }
 *   name_of(Color::red) == "red";  parse_word<Color>("blue") == Color::blue;
 *
 * C++17 on purpose: nvcc reads it through trainer/backend/backend.h.
 */
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sweep {

template <class E>
struct Word {
  E value;
  std::string_view name;
};

// A table's rows.
template <class E>
struct Words {
  const Word<E>* first;
  std::size_t count;
  constexpr const Word<E>* begin() const { return first; }
  constexpr const Word<E>* end() const { return first + count; }
};

// The value's name (its first word); "" for a value without one.
template <class E>
constexpr std::string_view name_of(E value) {
  for (const Word<E>& w : words_of(E{}))
    if (w.value == value) return w.name;
  return "";
}

// The value a word names (a name or an alias), or nullopt.
template <class E>
constexpr std::optional<E> parse_word(std::string_view text) {
  for (const Word<E>& w : words_of(E{}))
    if (w.name == text) return w.value;
  return std::nullopt;
}

// Every word, names and aliases, in table order.
template <class E>
std::vector<std::string> word_list() {
  std::vector<std::string> out;
  for (const Word<E>& w : words_of(E{})) out.emplace_back(w.name);
  return out;
}

// The words joined for a message: "sgdm, adam, rmsprop".
template <class E>
std::string words_text() {
  std::string out;
  for (const Word<E>& w : words_of(E{})) {
    if (!out.empty()) out += ", ";
    out += w.name;
  }
  return out;
}

}  // namespace sweep
