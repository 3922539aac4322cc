/*
 * vocabulary.h — every training option that takes one value of a list: its enum and its words.
 *
 * The trainer owns its vocabulary: TrainConfig holds these enums, and the YAML reader
 * (sweep/config) reads the words from the tables below, so a value is spelled in exactly one
 * place. Adding a value is adding an enumerator and its row; a test walks every table both ways
 * (tests/trainer/vocabulary_test.cpp), and the config round-trip test fails for a value the
 * writer cannot write back.
 *
 *   std::optional<OptimizerKind> o = parse_word<OptimizerKind>("adam");   // OptimizerKind::adam
 *   std::string_view text = name_of(Precision::bf16);              // "bf16"
 *   std::vector<std::string> all = word_list<ScheduleType>();      // fixed, piecewise, ...
 */
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sweep::trainer {

enum class DatasetKind { fashion_mnist, mnist, cifar10, synthetic };
enum class Validation { test, holdout, none };
enum class ShuffleMode { every_epoch, once, never };
enum class Preset { lenet, convnet, mlp, none };  // none: the model is model.layers
enum class OptimizerKind { sgdm, adam, rmsprop };
enum class ScheduleType { fixed, piecewise, multistep, inv, exp, poly, cosine };
enum class MonitorMetric { val_loss, val_accuracy, train_loss };
enum class OutputNetwork { best, last };
enum class Precision { fp32, tf32, bf16 };

// One word of a vocabulary. The first word of a value is its name; later ones are aliases the
// reader also accepts (cifar-10 for cifar10).
template <class E>
struct Word {
  E value;
  std::string_view name;
};

// A table's rows (std::span would do, but this header is also read by nvcc's front end).
template <class E>
struct Words {
  const Word<E>* first;
  std::size_t count;
  const Word<E>* begin() const { return first; }
  const Word<E>* end() const { return first + count; }
};

// The tables, found by argument type (words_of(OptimizerKind{})), with what each list is called in
// messages ("optimizer").
Words<DatasetKind> words_of(DatasetKind);
Words<Validation> words_of(Validation);
Words<ShuffleMode> words_of(ShuffleMode);
Words<Preset> words_of(Preset);
Words<OptimizerKind> words_of(OptimizerKind);
Words<ScheduleType> words_of(ScheduleType);
Words<MonitorMetric> words_of(MonitorMetric);
Words<OutputNetwork> words_of(OutputNetwork);
Words<Precision> words_of(Precision);

// The value's name (its first word).
template <class E>
std::string_view name_of(E value) {
  for (const Word<E>& w : words_of(E{}))
    if (w.value == value) return w.name;
  return "";  // a value without a word (Preset::none)
}

// The value a word names (a name or an alias), or nullopt.
template <class E>
std::optional<E> parse_word(std::string_view text) {
  for (const Word<E>& w : words_of(E{}))
    if (w.name == text) return w.value;
  return std::nullopt;
}

// Every word, names and aliases, in table order (for "one of: ..." messages and suggestions).
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

}  // namespace sweep::trainer
