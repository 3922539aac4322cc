/*
 * config_keys_test.cpp — the key table (trainer/config_keys.h): its rows are well formed, every
 * range boundary is refused or accepted by the library's check in the YAML reader's words, and
 * the docs' key tables list exactly its keys with its defaults.
 */
#include "trainer/config_keys.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "common/check.h"
#include "common/format.h"

namespace sweep::trainer {
namespace {

TEST(ConfigKeys, EveryRowIsWellFormed) {
  std::set<std::string> paths, names_and_aliases;
  std::set<const void*> fields;
  TrainConfig config;
  for (const ConfigKey& key : config_keys()) {
    SCOPED_TRACE(key.path());
    EXPECT_TRUE(paths.insert(key.path()).second) << "listed twice";
    EXPECT_FALSE(key.what.empty()) << "no description for the docs";
    const KeyField field = key.field(config);
    const bool is_word = std::holds_alternative<WordField>(field);
    EXPECT_EQ(is_word, !key.noun.empty()) << "an enum key names its values in messages";
    if (std::holds_alternative<std::monostate>(field)) {
      EXPECT_TRUE(key.by_hand);
    }
    // Two rows never fill one field.
    const void* address =
        std::visit(Overloaded{[](std::monostate) -> const void* { return nullptr; },
                              [](const WordField& w) -> const void* { return w.value; },
                              [](auto* p) -> const void* { return p; }},
                   field);
    if (address) {
      EXPECT_TRUE(fields.insert(address).second) << "a second row for one field";
    }
    for (std::string_view alias : key.aliases)
      EXPECT_TRUE(
          names_and_aliases.insert(std::string(key.section) + "." + std::string(alias)).second)
          << alias;
  }
  for (const std::string& path : paths) EXPECT_EQ(names_and_aliases.count(path), 0u) << path;
  for (const char* path :
       {"training.learning_rate", "training.schedule.type", "data.augment.flip", "model.layers"})
    EXPECT_NE(find_key(path), nullptr) << path;
  EXPECT_EQ(find_key("training.base_lr"), nullptr);  // an alias, not a key
}

TEST(ConfigKeys, SectionsComeParentFirst) {
  const std::vector<std::string> sections = key_sections();
  for (const char* s : {"data", "data.augment", "data.synthetic", "model", "training",
                        "training.schedule", "training.early_stopping", "training.checkpoint"})
    EXPECT_NE(std::find(sections.begin(), sections.end(), s), sections.end()) << s;
  for (std::size_t i = 0; i < sections.size(); ++i) {
    const std::size_t dot = sections[i].rfind('.');
    if (dot == std::string::npos) continue;
    const auto parent = std::find(sections.begin(), sections.end(), sections[i].substr(0, dot));
    EXPECT_LT(parent - sections.begin(), static_cast<std::ptrdiff_t>(i)) << sections[i];
  }
}

TEST(ConfigKeys, DefaultsAreTheStructsMembers) {
  EXPECT_EQ(default_text(*find_key("training.learning_rate")), "0.01");
  EXPECT_EQ(default_text(*find_key("training.optimizer")), "sgdm");
  EXPECT_EQ(default_text(*find_key("model.hidden")), "[256, 128]");
  EXPECT_EQ(default_text(*find_key("data.normalize")), "true");
  EXPECT_EQ(default_text(*find_key("data.path")), "per data set");
  EXPECT_EQ(words_of_key(*find_key("training.optimizer")), "sgdm, sgd, adam, rmsprop");
  // A default config is inside every range.
  const TrainConfig defaults;
  for (const ConfigKey& key : config_keys())
    if (!key.folder_only) {
      EXPECT_FALSE(range_problem(key, defaults)) << key.path();
    }
  EXPECT_NO_THROW(check_training_keys(TrainingSpec{}));
}

// The library's message for `config` with `key` at `value`, "" when accepted.
std::string problem_at(const ConfigKey& key, double value) {
  TrainConfig config;
  std::visit(
      Overloaded{[&](double* p) { *p = value; }, [&](int* p) { *p = static_cast<int>(value); },
                 [&](std::int64_t* p) { *p = static_cast<std::int64_t>(value); },
                 [&](std::vector<int>* p) { *p = {static_cast<int>(value)}; }, [](auto&&) {}},
      key.field(config));
  if (key.section.starts_with("training")) {
    try {
      check_training_keys(config.training);
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  }
  const auto problem = range_problem(key, config);
  return problem ? "key '" + key.path() + "': " + *problem : "";
}

TEST(ConfigKeys, EveryBoundIsRefusedOrAcceptedInTheReadersWords) {
  int probed = 0;
  TrainConfig scratch;
  for (const ConfigKey& key : config_keys()) {
    if (key.by_hand) continue;
    const KeyField field = key.field(scratch);
    const bool whole = !std::holds_alternative<double*>(field);
    if (!std::holds_alternative<double*>(field) && !std::holds_alternative<int*>(field) &&
        !std::holds_alternative<std::int64_t*>(field) &&
        !std::holds_alternative<std::vector<int>*>(field))
      continue;
    SCOPED_TRACE(key.path());
    const auto past = [&](double bound, double direction) {
      return whole ? bound + direction : std::nextafter(bound, bound + direction);
    };
    const auto text = [&](double v) {
      return whole ? std::to_string(std::int64_t(v)) : shortest(v);
    };
    const auto refused = [&](double v) {
      return "key '" + key.path() + "': must be " + key.range.describe() + ", got " + text(v);
    };
    if (key.range.min) {
      const double lo = *key.range.min;
      EXPECT_EQ(problem_at(key, lo), key.range.min_inclusive ? "" : refused(lo));
      EXPECT_EQ(problem_at(key, past(lo, -1)), refused(past(lo, -1)));
      if (!key.range.min_inclusive) {
        EXPECT_EQ(problem_at(key, past(lo, 1)), "");
      }
      ++probed;
    }
    if (key.range.max) {
      const double hi = *key.range.max;
      EXPECT_EQ(problem_at(key, hi), key.range.max_inclusive ? "" : refused(hi));
      EXPECT_EQ(problem_at(key, past(hi, 1)), refused(past(hi, 1)));
      if (!key.range.max_inclusive) {
        EXPECT_EQ(problem_at(key, past(hi, -1)), "");
      }
      ++probed;
    }
  }
  EXPECT_GT(probed, 40);
}

TEST(ConfigKeys, ALearningRateOfZeroIsRefused) {
  TrainingSpec spec;
  spec.learning_rate = 0;
  try {
    check_training_keys(spec);
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "key 'training.learning_rate': must be > 0, got 0");
  }
  spec.learning_rate = std::numeric_limits<double>::infinity();
  EXPECT_THROW(check_training_keys(spec), Error);
}

// ---- The docs' key tables -----------------------------------------------------------------

// The markdown table of `section`'s keys (data, model or training) as the docs hold it between
// <!-- keys:SECTION --> and <!-- /keys:SECTION -->: generated from the table, so that a key
// added to it and not to the docs (or the other way) fails here; with SWEEP_WRITE_KEY_TABLES set
// the test writes the tables into the page instead.
std::string docs_table(const std::string& section) {
  const auto escape = [](std::string text) {
    std::string out;
    for (char c : text) out += c == '|' ? std::string("\\|") : std::string(1, c);
    return out;
  };
  TrainConfig scratch;
  std::ostringstream out;
  out << "| key | default | allowed | what |\n|---|---|---|---|\n";
  for (const ConfigKey& key : config_keys()) {
    if (key.section != section && !key.section.starts_with(section + ".")) continue;
    std::string name = key.path().substr(section.size() + 1);
    std::string cell = "`" + name + "`";
    for (std::size_t i = 0; i < key.aliases.size(); ++i)
      cell += (i == 0 ? " (`" : ", `") + std::string(key.aliases[i]) + "`" +
              (i + 1 == key.aliases.size() ? ")" : "");
    const std::string fallback = default_text(key);
    std::string allowed = words_of_key(key);
    for (std::size_t at = allowed.find(", "); at != std::string::npos; at = allowed.find(", ", at))
      allowed.replace(at, 2, " | ");
    if (allowed.empty() && (key.range.min || key.range.max)) allowed = key.range.describe();
    if (std::holds_alternative<bool*>(key.field(scratch))) allowed = "true | false";
    const bool prose = fallback.empty() || !key.shown_default.empty();  // not a value to quote
    out << "| " << cell << " | " << (prose ? fallback : "`" + fallback + "`") << " | "
        << escape(allowed) << " | " << escape(std::string(key.what)) << " |\n";
  }
  return out.str();
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(ConfigKeys, TheDocsListExactlyTheTablesKeys) {
  const std::filesystem::path root = SWEEP_SOURCE_DIR;
  std::vector<std::filesystem::path> pages = {root / "README.md"};
  if (std::filesystem::is_directory(root / "docs"))
    for (const auto& entry : std::filesystem::directory_iterator(root / "docs"))
      if (entry.path().extension() == ".md") pages.push_back(entry.path());
  for (const std::string section : {"data", "model", "training"}) {
    const std::string open = "<!-- keys:" + section + " -->\n";
    const std::string close = "<!-- /keys:" + section + " -->";
    int found = 0;
    for (const auto& page : pages) {
      const std::string text = read_file(page);
      const std::size_t begin = text.find(open);
      if (begin == std::string::npos) continue;
      ++found;
      const std::size_t end = text.find(close, begin);
      ASSERT_NE(end, std::string::npos) << page << ": no " << close;
      const std::string held = text.substr(begin + open.size(), end - begin - open.size());
      if (std::getenv("SWEEP_WRITE_KEY_TABLES") && held != docs_table(section)) {
        std::ofstream(page) << text.substr(0, begin + open.size()) << docs_table(section)
                            << text.substr(end);
        continue;
      }
      EXPECT_EQ(held, docs_table(section))
          << page << ": the " << section << " key table differs from trainer/config_keys.cpp; "
          << "run this test with SWEEP_WRITE_KEY_TABLES=1 to write it";
    }
    EXPECT_EQ(found, 1) << "the " << section << " key table (" << open
                        << ") should be in one page of README.md, docs/*.md";
  }
}

}  // namespace
}  // namespace sweep::trainer
