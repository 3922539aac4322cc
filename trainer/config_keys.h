/*
 * config_keys.h — every key of a config's data, model and training sections, in one table.
 *
 * One row per key: where it sits (section and name), the TrainConfig field it fills, its allowed
 * range, its other names (Caffe's and MATLAB's), the words of an enum key (from
 * trainer/vocabulary.h) and one line for the docs. The field gives the key's type, and its
 * default is the member's initializer in trainer/train_config.h, read from a default-built
 * TrainConfig, so a default is written once. Everything that lists keys reads this table: the
 * YAML reader and writer (sweep/config/train_config_reader.cpp, train_config_writer.cpp), the
 * checks a hand-built TrainConfig meets (check_training_keys, called by the optimizer, the
 * schedule and the training loop), and the docs' key tables (a test compares them).
 *
 * Adding a key is two edits: the member in train_config.h (its type and default) and its row in
 * config_keys.cpp; the reader, writer, checks and docs follow (the docs' tables between
 * <!-- keys:SECTION --> markers are rewritten by tests/trainer/config_keys_test.cpp run with
 * SWEEP_WRITE_KEY_TABLES=1), and tests fail where they do not (that test; for the reader and the
 * writer tests/sweep/config/train_config_writer_test.cpp and bad_configs_test.cpp). The optimizer's
 * defaults sit in trainer/optimizer_defaults.h, which a backend's OptimizerStep shares. A key
 * whose reading needs more than a type and a range (data.path's default depends on the data
 * set, image_size fills two fields, model.layers is a list of layers) is a row marked by_hand:
 * the reader and the writer treat it by name, and the tests and docs still see it.
 *
 *   const ConfigKey* k = find_key("training.learning_rate");   // range > 0, alias base_lr
 *   check_training_keys(spec);  // throws "key 'training.momentum': must be in [0, 1), got 1"
 */
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "trainer/train_config.h"

namespace sweep::trainer {

// An allowed numeric interval, for messages like "must be > 0" or "must be in [0, 1)".
struct Range {
  std::optional<double> min, max;
  bool min_inclusive = true, max_inclusive = true;

  static Range any() { return {}; }
  static Range positive() { return {0.0, std::nullopt, false, true}; }
  static Range at_least(double lo) { return {lo, std::nullopt, true, true}; }
  static Range closed(double lo, double hi) { return {lo, hi, true, true}; }
  static Range half_open(double lo, double hi) { return {lo, hi, true, false}; }  // [lo, hi)
  static Range open(double lo, double hi) { return {lo, hi, false, false}; }
  bool contains(double v) const;
  std::string describe() const;  // "> 0", ">= 1", "in [0, 1)"
};

// An enum field of trainer/vocabulary.h, reached through its words.
struct WordField {
  void* value;
  std::string_view (*get)(const void* value);
  bool (*set)(void* value, std::string_view word);  // false: not a word of the enum
  std::vector<std::string> (*words)();

  template <class E>
  static WordField of(E& v) {
    return {&v, [](const void* p) { return name_of(*static_cast<const E*>(p)); },
            [](void* p, std::string_view word) {
              const std::optional<E> e = parse_word<E>(word);
              if (e) *static_cast<E*>(p) = *e;
              return e.has_value();
            },
            [] { return word_list<E>(); }};
  }
};

// Visits a KeyField with one lambda per type: std::visit(Overloaded{[](double* v) {...}, ...}, f).
template <class... F>
struct Overloaded : F... {
  using F::operator()...;
};
// Spelled out: clang before 17 deduces no aggregate's template arguments by itself.
template <class... F>
Overloaded(F...) -> Overloaded<F...>;

// The field a key fills; its alternative is the key's type. A by_hand key may have none.
using KeyField =
    std::variant<std::monostate, double*, int*, std::int64_t*, std::uint64_t*, bool*, std::string*,
                 std::vector<int>*, std::vector<std::string>*, WordField>;

struct ConfigKey {
  std::string_view section;  // "training", "training.schedule", "data.augment"
  std::string_view name;
  KeyField (*field)(TrainConfig&);
  Range range;
  std::string_view what;  // one line for the docs
  std::string_view noun;  // an enum key's messages: "unknown <noun> 'x'"
  std::vector<std::string_view> aliases;
  // The writer writes the key when this says so (nullptr: always), so that a default config's
  // text, and with it its trials' identities, stays what it was.
  bool (*written)(const TrainConfig&) = nullptr;
  bool folder_only = false;        // applies to dataset: folder alone; refused for another data set
  bool by_hand = false;            // read and written by name in sweep/config (see the header)
  std::string_view shown_default;  // the docs' default where the field's value does not say it

  std::string path() const;  // "training.schedule.type"

  // Builders for the rows (config_keys.cpp).
  ConfigKey also(std::vector<std::string_view> other_names) const;
  ConfigKey called(std::string_view word_noun) const;
  ConfigKey when(bool (*predicate)(const TrainConfig&)) const;
  ConfigKey for_folder() const;
  ConfigKey hand_read() const;
  ConfigKey shown(std::string_view docs_default) const;
};

// Every key, in the order the writer writes them (sections nested where their first key is).
const std::vector<ConfigKey>& config_keys();
// The row of "training.learning_rate", or nullptr. Aliases are not paths here.
const ConfigKey* find_key(std::string_view path);
// The sections the keys sit in, parents before children: data, data.augment, ..., training.
std::vector<std::string> key_sections();

// The key's default as the docs show it: "0.01", "sgdm", "[256, 128]", "true", "" (empty text).
std::string default_text(const ConfigKey& key);
// The key's words when it is an enum key ("sgdm, sgd, adam, rmsprop"), else "".
std::string words_of_key(const ConfigKey& key);

// Why `config`'s value of `key` is outside its range ("must be in [0, 1), got 1"), or nullopt.
// A by_hand key, a word and a text have no range to break.
std::optional<std::string> range_problem(const ConfigKey& key, const TrainConfig& config);
// Throws Error "key 'training.momentum': must be in [0, 1), got 1" (the reader's words without
// the file's place) for the first training.* key outside its range, and for the rules across
// keys that the reader does not check (nesterov needs momentum > 0). The library's own check of
// a hand-built config: a value the YAML reader refuses is refused here by the same rule.
void check_training_keys(const TrainingSpec& spec);

}  // namespace sweep::trainer
