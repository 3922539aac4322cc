/*
 * csv_reader.h — a `dataset: csv` data set: a table of numeric feature columns and one label
 * column, RFC 4180 text.
 *
 * The file: comma-separated fields, a header row of column names first (required, names unique),
 * fields optionally in double quotes (a quote inside one doubled; a quoted field may hold commas
 * and line breaks), lines ended by LF or CRLF, a UTF-8 byte order mark skipped, empty lines
 * skipped. Every row has the header's number of fields.
 *
 * Features: every column but the label, or `feature_columns` in that order; each value a finite
 * number written in decimal (a whole field, spaces around it allowed; "nan", "inf", hex and empty
 * fields are refused), stored as float features (C = the number of feature columns, H = W = 1).
 * The label, by `task`: classification — the column's distinct values (as text, spaces around
 * them trimmed) are the classes, sorted as text or, when every value is an integer, by value;
 * their names are the Dataset's class_names (at most 255); regression — a number like the
 * features, the float target. Every refusal names the file, the row (its line in an editor,
 * the header being line 1) and the column.
 */
#pragma once

#include <string>
#include <vector>

#include "trainer/data/dataset.h"
#include "trainer/vocabulary.h"

namespace sweep::trainer {

struct CsvOptions {
  std::string label = "label";
  std::vector<std::string> feature_columns;  // empty: every column but the label
  Task task = Task::classification;
};

// The classes' most: labels are uint8 and a class count of 256 would not fit the engine's check.
inline constexpr int kCsvMaxClasses = 255;

// A training file.
Dataset read_csv(const std::string& path, const CsvOptions& options);

// A validation file: the same header as the training file at `training_path`, and (for
// classification) labels among `training`'s class names, numbered as there.
Dataset read_csv_validation(const std::string& path, const CsvOptions& options,
                            const std::string& training_path, const Dataset& training);

// The named columns of every row as float features, no label read (a label column may be there
// or not): the inputs `sweep predict` reads with a model's columns.
Dataset read_csv_features(const std::string& path, const std::vector<std::string>& columns);

// The header row's column names.
std::vector<std::string> read_csv_header(const std::string& path);

}  // namespace sweep::trainer
