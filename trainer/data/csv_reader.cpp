/*
 * csv_reader.cpp — the RFC 4180 record parser, then columns chosen by name and converted.
 *
 * Numbers go through std::from_chars (locale-free, decimal and exponent forms only, so "0x1p3"
 * and "1,5" are not numbers); a leading '+' is allowed; what it parses must be the whole field and
 * finite, and fit a float32.
 */
#include "trainer/data/csv_reader.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <string_view>

#include "common/check.h"
#include "trainer/data/binary_file.h"
#include "trainer/data/file_limits.h"

namespace sweep::trainer {

namespace {

std::string whole_file(const std::string& path) {
  const std::uint64_t size = regular_file_size(path);
  check_data_size(path, "the file", size);
  const DataFile f = open_data_file(path);
  std::string text(std::size_t(size), '\0');
  if (size > 0 && std::fread(text.data(), 1, text.size(), f.get()) != text.size())
    throw Error(path + ": cannot read its " + std::to_string(size) + " bytes");
  return text;
}

// The records of a CSV text, one at a time, each with the line it starts on.
class RecordReader {
 public:
  RecordReader(const std::string& text, const std::string& path) : text_(text), path_(path) {
    if (text_.substr(0, 3) == "\xEF\xBB\xBF") at_ = 3;
  }

  // The next non-empty record into `fields`; false at the end of the text.
  bool next(std::vector<std::string>& fields, std::size_t& line) {
    while (at_ < text_.size()) {
      line = line_;
      read_record(fields);
      if (!(fields.size() == 1 && fields[0].empty() && !last_quoted_)) return true;
    }
    return false;
  }

 private:
  [[noreturn]] void fail(const std::string& why) const {
    throw Error(path_ + ": row " + std::to_string(record_line_) + ": " + why);
  }
  void read_record(std::vector<std::string>& fields) {
    fields.clear();
    record_line_ = line_;
    while (true) {
      std::string field;
      last_quoted_ = at_ < text_.size() && text_[at_] == '"';
      if (last_quoted_) {
        ++at_;
        while (true) {
          if (at_ >= text_.size())
            fail("a quoted field (column " + std::to_string(fields.size() + 1) +
                 ") has no closing quote");
          const char c = text_[at_];
          if (c == '"') {
            if (at_ + 1 < text_.size() && text_[at_ + 1] == '"') {
              field += '"';
              at_ += 2;
              continue;
            }
            ++at_;
            break;
          }
          if (c == '\n') ++line_;
          field += c;
          ++at_;
        }
        if (at_ < text_.size() && text_[at_] != ',' && text_[at_] != '\r' && text_[at_] != '\n')
          fail("text after the closing quote of column " + std::to_string(fields.size() + 1) +
               " (a quote inside a quoted field is written \"\")");
      } else {
        const std::size_t start = at_;
        while (at_ < text_.size() && text_[at_] != ',' && text_[at_] != '\r' &&
               text_[at_] != '\n') {
          if (text_[at_] == '"')
            fail("a quote inside the unquoted field of column " +
                 std::to_string(fields.size() + 1) +
                 " (quote the whole field and double the quote)");
          ++at_;
        }
        field.assign(text_, start, at_ - start);
      }
      fields.push_back(std::move(field));
      if (at_ >= text_.size()) return;
      const char c = text_[at_++];
      if (c == ',') continue;
      if (c == '\r') {
        if (at_ >= text_.size() || text_[at_] != '\n')
          fail("a carriage return not followed by a line feed (lines end in LF or CRLF)");
        ++at_;
      }
      ++line_;
      return;
    }
  }

  const std::string& text_;
  const std::string& path_;
  std::size_t at_ = 0;
  std::size_t line_ = 1;
  std::size_t record_line_ = 1;
  bool last_quoted_ = false;
};

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::string in_quotes(std::string_view s) {
  std::string out(s.substr(0, 40));
  for (char& c : out)
    if (static_cast<unsigned char>(c) < 0x20) c = ' ';
  return "'" + out + (s.size() > 40 ? "...'" : "'");
}

// The field as a float, or the reason it is not one.
bool parse_number(std::string_view field, float& out, std::string& why) {
  std::string_view s = trimmed(field);
  if (s.empty()) {
    why = "empty (every value must be a number)";
    return false;
  }
  if (s.size() > 1 && s[0] == '+' && s[1] != '-') s.remove_prefix(1);
  double v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec == std::errc::result_out_of_range) {
    why = in_quotes(field) + " is out of range";
    return false;
  }
  if (ec != std::errc() || end != s.data() + s.size()) {
    why = in_quotes(field) + " is not a number";
    return false;
  }
  if (!std::isfinite(v)) {
    why = in_quotes(field) + " is not a finite number (nan and inf are not read)";
    return false;
  }
  if (std::fabs(v) > double(std::numeric_limits<float>::max())) {
    why = in_quotes(field) + " is beyond float32's range";
    return false;
  }
  out = float(v);
  return true;
}

bool is_integer(std::string_view s) {
  if (!s.empty() && s[0] == '-') s.remove_prefix(1);
  return !s.empty() && s.size() <= 18 &&
         std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::string join_names(const std::vector<std::string>& names) {
  std::string text;
  for (std::size_t i = 0; i < names.size() && i < 20; ++i) text += (i ? ", " : "") + names[i];
  if (names.size() > 20) text += ", ... (" + std::to_string(names.size()) + " in all)";
  return text;
}

// A parsed table: the feature values row-major and the raw label texts (classification) or
// targets (regression).
struct Table {
  std::vector<std::string> header;
  std::vector<std::string> features_named;
  std::vector<float> features;
  std::vector<std::string> label_texts;
  std::vector<std::size_t> label_lines;
  std::vector<float> targets;
  std::size_t rows = 0;  // counted here only when no label is read
};

// `with_label` false: the label column is not looked for (prediction inputs), the features are
// options.feature_columns.
Table read_table(const std::string& path, const CsvOptions& options, bool with_label = true) {
  const std::string text = whole_file(path);
  RecordReader records(text, path);
  Table t;
  std::size_t line = 0;
  if (!records.next(t.header, line))
    throw Error(path + ": empty (a CSV data set starts with a header row of column names)");
  for (std::size_t i = 0; i < t.header.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (t.header[i] == t.header[j])
        throw Error(path + ": the header names column '" + t.header[i] + "' twice");
  const auto column = [&](const std::string& name) -> std::size_t {
    return std::size_t(std::find(t.header.begin(), t.header.end(), name) - t.header.begin());
  };
  const std::size_t label = with_label ? column(options.label) : t.header.size();
  if (with_label && label == t.header.size())
    throw Error(path + ": no label column '" + options.label + "' (its header has " +
                join_names(t.header) + "; data.label names the label column)");
  std::vector<std::size_t> cols;
  if (options.feature_columns.empty()) {
    for (std::size_t i = 0; i < t.header.size(); ++i)
      if (i != label) cols.push_back(i);
  } else {
    for (const std::string& name : options.feature_columns) {
      const std::size_t i = column(name);
      if (i == t.header.size())
        throw Error(path + ": no column '" + name + "' of data.feature_columns (its header has " +
                    join_names(t.header) + ")");
      if (i == label)
        throw Error(path + ": data.feature_columns names the label column '" + name + "'");
      cols.push_back(i);
    }
  }
  if (cols.empty())
    throw Error(path + ": no feature columns (the header has only the label column '" +
                options.label + "')");
  for (const std::size_t i : cols) t.features_named.push_back(t.header[i]);

  std::vector<std::string> fields;
  std::string why;
  while (records.next(fields, line)) {
    const auto at = [&](std::size_t col) {
      return path + ": row " + std::to_string(line) + ", column '" + t.header[col] + "': ";
    };
    if (fields.size() != t.header.size())
      throw Error(path + ": row " + std::to_string(line) + " has " + std::to_string(fields.size()) +
                  " fields, the header " + std::to_string(t.header.size()));
    for (const std::size_t col : cols) {
      float v = 0;
      if (!parse_number(fields[col], v, why)) throw Error(at(col) + why);
      t.features.push_back(v);
    }
    if (!with_label) {
      ++t.rows;
    } else if (options.task == Task::regression) {
      float v = 0;
      if (!parse_number(fields[label], v, why)) throw Error(at(label) + why);
      t.targets.push_back(v);
    } else {
      const std::string_view value = trimmed(fields[label]);
      if (value.empty()) throw Error(at(label) + "empty (every row needs its class)");
      t.label_texts.emplace_back(value);
      t.label_lines.push_back(line);
    }
  }
  const std::size_t rows = !with_label                        ? t.rows
                           : options.task == Task::regression ? t.targets.size()
                                                              : t.label_texts.size();
  if (rows == 0) throw Error(path + ": no rows after its header");
  return t;
}

Dataset dataset_of(const std::string& path, const Table& t) {
  Dataset d;
  d.source = path;
  d.c = int(t.features_named.size());
  d.features = t.features;
  d.targets = t.targets;
  return d;
}

// The label texts numbered by `names`; a text not among them is refused with its row.
void number_labels(const std::string& path, const CsvOptions& options, const Table& t,
                   const std::vector<std::string>& names, const std::string& names_from,
                   Dataset& d) {
  std::map<std::string_view, std::uint8_t> index;
  for (std::size_t i = 0; i < names.size(); ++i) index.emplace(names[i], std::uint8_t(i));
  d.labels.reserve(t.label_texts.size());
  for (std::size_t r = 0; r < t.label_texts.size(); ++r) {
    const auto it = index.find(t.label_texts[r]);
    if (it == index.end())
      throw Error(path + ": row " + std::to_string(t.label_lines[r]) + ", column '" +
                  options.label + "': " + in_quotes(t.label_texts[r]) +
                  " is not one of the classes " + names_from + " (" + join_names(names) + ")");
    d.labels.push_back(it->second);
  }
  d.classes = int(names.size());
  d.class_names = names;
}

}  // namespace

std::vector<std::string> read_csv_header(const std::string& path) {
  const std::string text = whole_file(path);
  RecordReader records(text, path);
  std::vector<std::string> header;
  std::size_t line = 0;
  if (!records.next(header, line))
    throw Error(path + ": empty (a CSV data set starts with a header row of column names)");
  return header;
}

Dataset read_csv(const std::string& path, const CsvOptions& options) {
  const Table t = read_table(path, options);
  Dataset d = dataset_of(path, t);
  if (options.task == Task::regression) return d;
  const std::set<std::string> distinct(t.label_texts.begin(), t.label_texts.end());
  std::vector<std::string> names(distinct.begin(), distinct.end());
  if (std::all_of(names.begin(), names.end(), [](const std::string& s) { return is_integer(s); }))
    std::stable_sort(names.begin(), names.end(), [](const std::string& a, const std::string& b) {
      return std::stoll(a) < std::stoll(b);
    });
  if (names.size() > std::size_t(kCsvMaxClasses))
    throw Error(path + ": column '" + options.label + "' has " + std::to_string(names.size()) +
                " distinct values, more than the " + std::to_string(kCsvMaxClasses) +
                " classes read (a numeric target is data.task: regression)");
  number_labels(path, options, t, names, "of the file", d);
  return d;
}

Dataset read_csv_features(const std::string& path, const std::vector<std::string>& columns) {
  if (columns.empty()) throw Error(path + ": no feature columns to read");
  CsvOptions options;
  options.feature_columns = columns;
  const Table t = read_table(path, options, false);
  return dataset_of(path, t);
}

Dataset read_csv_validation(const std::string& path, const CsvOptions& options,
                            const std::string& training_path, const Dataset& training) {
  const std::vector<std::string> want = read_csv_header(training_path);
  const Table t = read_table(path, options);
  if (t.header != want)
    throw Error(path + ": its header (" + join_names(t.header) + ") differs from " + training_path +
                "'s (" + join_names(want) +
                "): data.validation_path needs the same columns in the same order");
  Dataset d = dataset_of(path, t);
  if (options.task == Task::classification)
    number_labels(path, options, t, training.class_names, "of " + training_path, d);
  return d;
}

}  // namespace sweep::trainer
