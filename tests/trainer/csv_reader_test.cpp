/*
 * csv_reader_test.cpp — the CSV reader on files the test writes: RFC 4180's quoting and line
 * ends, column choice, class names and their order, regression targets, validation files, and
 * every refusal with the file, row and column its message names.
 */
#include "trainer/data/csv_reader.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "common/check.h"
#include "tests/test_dir.h"

namespace sweep::trainer {
namespace {

namespace fs = std::filesystem;

class TempDir : public sweep::testing::TestDir {
 public:
  TempDir() : TestDir("sweep_csv_test") {}
};

CsvOptions options(Task task = Task::classification, std::string label = "label",
                   std::vector<std::string> features = {}) {
  CsvOptions o;
  o.task = task;
  o.label = std::move(label);
  o.feature_columns = std::move(features);
  return o;
}

// The message read_csv throws for `text`, with the file's path replaced by "F".
std::string refusal(const std::string& text, const CsvOptions& o = options()) {
  const TempDir dir;
  const std::string path = dir.write("data.csv", text);
  try {
    read_csv(path, o);
  } catch (const Error& e) {
    std::string what = e.what();
    if (what.rfind(path, 0) == 0) return std::string("F") + (what.c_str() + path.size());
    return "(the message does not start with the file) " + what;
  }
  return "";
}

TEST(CsvReader, ReadsFeaturesAndClassNamesSortedAsText) {
  const TempDir dir;
  const std::string path = dir.write("d.csv", "a,b,label\n1,2.5,dog\n-3,4e2,cat\n+5, 6 ,dog\n");
  const Dataset d = read_csv(path, options());
  EXPECT_EQ(d.source, path);
  EXPECT_EQ(d.c, 2);
  EXPECT_EQ(d.h * d.w, 1);
  EXPECT_EQ(d.features, (std::vector<float>{1, 2.5f, -3, 400, 5, 6}));
  EXPECT_EQ(d.class_names, (std::vector<std::string>{"cat", "dog"}));
  EXPECT_EQ(d.classes, 2);
  EXPECT_EQ(d.labels, (std::vector<std::uint8_t>{1, 0, 1}));
  EXPECT_FALSE(d.is_regression());
}

TEST(CsvReader, SortsIntegerClassesByValue) {
  const TempDir dir;
  const Dataset d = read_csv(dir.write("d.csv", "x,label\n0,10\n1,2\n2,-1\n3,2\n"), options());
  EXPECT_EQ(d.class_names, (std::vector<std::string>{"-1", "2", "10"}));
  EXPECT_EQ(d.labels, (std::vector<std::uint8_t>{2, 1, 0, 1}));
}

TEST(CsvReader, ReadsQuotesCrlfBomAndEmptyLines) {
  const TempDir dir;
  const std::string text =
      "\xEF\xBB\xBF\"a\",\"the label\"\r\n\"1.5\",\"x, "
      "\"\"quoted\"\"\"\r\n\r\n2,\"two\nlines\"\r\n";
  const Dataset d = read_csv(dir.write("d.csv", text), options(Task::classification, "the label"));
  EXPECT_EQ(d.features, (std::vector<float>{1.5f, 2}));
  EXPECT_EQ(d.class_names, (std::vector<std::string>{"two\nlines", "x, \"quoted\""}));
}

TEST(CsvReader, ChoosesFeatureColumnsInTheirOrder) {
  const TempDir dir;
  const Dataset d = read_csv(dir.write("d.csv", "a,b,c,y\n1,2,3,0\n4,5,6,1\n"),
                             options(Task::classification, "y", {"c", "a"}));
  EXPECT_EQ(d.c, 2);
  EXPECT_EQ(d.features, (std::vector<float>{3, 1, 6, 4}));
}

TEST(CsvReader, ReadsRegressionTargets) {
  const TempDir dir;
  const Dataset d =
      read_csv(dir.write("d.csv", "a,price\n1,10.5\n2,-3\n"), options(Task::regression, "price"));
  EXPECT_EQ(d.classes, 0);
  EXPECT_TRUE(d.is_regression());
  EXPECT_TRUE(d.labels.empty());
  EXPECT_EQ(d.targets, (std::vector<float>{10.5f, -3}));
}

TEST(CsvReader, RefusesMissingAndNonNumericValuesNamingRowAndColumn) {
  EXPECT_EQ(refusal("a,b,label\n1,2,x\n3,,y\n"),
            "F: row 3, column 'b': empty (every value must be a number)");
  EXPECT_EQ(refusal("a,b,label\n1,2,x\n3,abc,y\n"), "F: row 3, column 'b': 'abc' is not a number");
  EXPECT_EQ(refusal("a,b,label\n1,2,x\n3,1.5.2,y\n"),
            "F: row 3, column 'b': '1.5.2' is not a number");
  EXPECT_EQ(refusal("a,label\nnan,x\n"),
            "F: row 2, column 'a': 'nan' is not a finite number (nan and inf are not read)");
  EXPECT_EQ(refusal("a,label\n-inf,x\n"),
            "F: row 2, column 'a': '-inf' is not a finite number (nan and inf are not read)");
  EXPECT_EQ(refusal("a,label\n0x10,x\n"), "F: row 2, column 'a': '0x10' is not a number");
  EXPECT_EQ(refusal("a,label\n1e40,x\n"), "F: row 2, column 'a': '1e40' is beyond float32's range");
  EXPECT_EQ(refusal("a,label\n1,\n"),
            "F: row 2, column 'label': empty (every row needs its class)");
  EXPECT_EQ(refusal("a,label\n1,x\n", options(Task::regression)),
            "F: row 2, column 'label': 'x' is not a number");
  // Rows counted as an editor counts lines, a quoted line break included.
  EXPECT_EQ(refusal("a,label\n1,\"multi\nline\"\n2,x\nbad,y\n"),
            "F: row 5, column 'a': 'bad' is not a number");
}

TEST(CsvReader, RefusesAMissingLabelColumn) {
  EXPECT_EQ(refusal("a,b,class\n1,2,x\n"),
            "F: no label column 'label' (its header has a, b, class; data.label names the label "
            "column)");
  EXPECT_EQ(refusal("a,label\n1,x\n", options(Task::classification, "label", {"a", "z"})),
            "F: no column 'z' of data.feature_columns (its header has a, label)");
  EXPECT_EQ(refusal("a,label\n1,x\n", options(Task::classification, "label", {"label"})),
            "F: data.feature_columns names the label column 'label'");
  EXPECT_EQ(refusal("label\nx\n"),
            "F: no feature columns (the header has only the label column "
            "'label')");
}

TEST(CsvReader, RefusesMalformedText) {
  EXPECT_EQ(refusal(""), "F: empty (a CSV data set starts with a header row of column names)");
  EXPECT_EQ(refusal("a,label\n"), "F: no rows after its header");
  EXPECT_EQ(refusal("a,a,label\n1,2,x\n"), "F: the header names column 'a' twice");
  EXPECT_EQ(refusal("a,label\n1,x\n2,y,3\n"), "F: row 3 has 3 fields, the header 2");
  EXPECT_EQ(refusal("a,label\n1,\"x\n"),
            "F: row 2: a quoted field (column 2) has no closing quote");
  EXPECT_EQ(refusal("a,label\n1,\"x\"y\n"),
            "F: row 2: text after the closing quote of column 2 (a quote inside a quoted field is "
            "written \"\")");
  EXPECT_EQ(refusal("a,label\n1,x\"y\n"),
            "F: row 2: a quote inside the unquoted field of column 2 (quote the whole field and "
            "double the quote)");
  EXPECT_EQ(refusal("a,label\r1,x\n"),
            "F: row 1: a carriage return not followed by a line feed (lines end in LF or CRLF)");
}

TEST(CsvReader, RefusesMoreThan255Classes) {
  std::string text = "a,label\n";
  for (int i = 0; i < 300; ++i) text += "1,c" + std::to_string(i) + "\n";
  EXPECT_EQ(refusal(text),
            "F: column 'label' has 300 distinct values, more than the 255 classes "
            "read (a numeric target is data.task: regression)");
}

TEST(CsvReader, ReadsAValidationFileWithTheTrainingClasses) {
  const TempDir dir;
  const std::string train = dir.write("train.csv", "a,label\n1,dog\n2,cat\n3,emu\n");
  const std::string val = dir.write("val.csv", "a,label\n4,emu\n5,dog\n");
  const Dataset t = read_csv(train, options());
  const Dataset v = read_csv_validation(val, options(), train, t);
  EXPECT_EQ(v.class_names, t.class_names);
  EXPECT_EQ(v.classes, 3);
  EXPECT_EQ(v.labels, (std::vector<std::uint8_t>{2, 1}));
  const std::string other = dir.write("other.csv", "a,label\n4,owl\n");
  try {
    read_csv_validation(other, options(), train, t);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), other +
                                         ": row 2, column 'label': 'owl' is not one of the "
                                         "classes of " +
                                         train + " (cat, dog, emu)");
  }
  const std::string header = dir.write("header.csv", "b,label\n4,dog\n");
  try {
    read_csv_validation(header, options(), train, t);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              header + ": its header (b, label) differs from " + train +
                  "'s (a, label): data.validation_path needs the same columns in the same order");
  }
}

// A 50 GB file (sparse: it takes no disk) is refused by its size, before a byte is read.
TEST(CsvReader, RefusesAHugeFileBySize) {
  const TempDir dir;
  const std::string path = dir.write("huge.csv", "a,label\n1,x\n");
  std::filesystem::resize_file(path, std::uintmax_t(50) << 30);
  try {
    read_csv(path, options());
    FAIL() << "a 50 GB CSV was read";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(path + ": the file is 53687091200 bytes (50.0 GiB), over "
                                                "the "),
              std::string::npos)
        << e.what();
  }
}

TEST(CsvReader, RefusesAMissingFile) {
  try {
    read_csv("/nonexistent/d.csv", options());
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "/nonexistent/d.csv: no such file");
  }
}

}  // namespace
}  // namespace sweep::trainer
