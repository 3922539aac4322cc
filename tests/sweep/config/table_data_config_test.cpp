/*
 * table_data_config_test.cpp — the data keys of `dataset: numpy` and `dataset: csv` (layout,
 * task, label, feature_columns, validation_path): read, checked against the files before
 * anything runs, each refusal with its file:line:col, and the model's input and classes worked
 * out from the files.
 */
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "config_test_util.h"
#include "tests/test_dir.h"
#include "trainer/data/data_shape.h"

namespace sweep::config::testing {
namespace {

namespace fs = std::filesystem;

const std::string kNumpyDir = std::string(SWEEP_SOURCE_DIR) + "/tests/trainer/numpy";

class TempDir : public sweep::testing::TestDir {
 public:
  TempDir() : TestDir("sweep_table_config") {}
  std::string path() const { return TestDir::path().string(); }
};

// An .npy file's bytes (format 1.0) for a header's descr and shape and the data.
std::string npy(const std::string& descr, const std::string& shape, const std::string& data) {
  std::string h = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  while ((10 + h.size() + 1) % 64 != 0) h += ' ';
  h += '\n';
  return std::string("\x93NUMPY\x01\x00", 8) + char(h.size()) + '\0' + h + data;
}

const char* kModel = "model: {preset: mlp, hidden: [8]}\ntraining: {epochs: 1, batch_size: 2}\n";

TEST(TableDataConfig, ReadsTheCsvKeys) {
  const TempDir dir;
  const std::string train = dir.write("t.csv", "a,b,c,kind\n1,2,3,x\n4,5,6,y\n7,8,9,z\n");
  const std::string val = dir.write("v.csv", "a,b,c,kind\n1,2,3,y\n");
  const SweepConfig c =
      load_text("data: {dataset: csv, path: " + train + ", validation_path: " + val +
                ", label: kind, feature_columns: [c, a]}\n" + kModel);
  const trainer::DataSpec& d = c.base.data;
  EXPECT_EQ(d.dataset, trainer::DatasetKind::csv);
  EXPECT_EQ(d.label, "kind");
  EXPECT_EQ(d.feature_columns, (std::vector<std::string>{"c", "a"}));
  EXPECT_EQ(d.validation_path, val);
  EXPECT_EQ(d.task, trainer::Task::classification);
  const trainer::DataShape shape = trainer::data_shape(d);
  EXPECT_EQ(shape.image.c, 2);
  EXPECT_EQ(shape.image.h * shape.image.w, 1);
  EXPECT_EQ(shape.classes, 3);
}

TEST(TableDataConfig, ReadsTheNumpyKeys) {
  const SweepConfig c = load_text("data: {dataset: numpy, path: " + kNumpyDir +
                                  "/nhwc.npz, layout: nhwc, validation: holdout}\n" + kModel);
  EXPECT_EQ(c.base.data.layout, trainer::Layout::nhwc);
  const trainer::DataShape shape = trainer::data_shape(c.base.data);
  EXPECT_EQ(shape.image.c, 2);
  EXPECT_EQ(shape.image.h, 2);
  EXPECT_EQ(shape.image.w, 3);
  EXPECT_EQ(shape.classes, 2);
}

TEST(TableDataConfig, RefusesMissingFilesAndSplits) {
  EXPECT_EQ(
      problems("data: {dataset: csv, path: /nonexistent/d.csv, validation: holdout}\n"),
      (std::vector<std::string>{"t.yaml:1:28: key 'data.path': data file '/nonexistent/d.csv' "
                                "does not exist (dataset: csv reads one CSV file)"}));
  EXPECT_EQ(problems("data: {dataset: numpy}\n"),
            (std::vector<std::string>{"t.yaml:1:17: key 'data.dataset': dataset: numpy needs "
                                      "data.path (an .npz file or a directory of .npy files)"}));
  EXPECT_EQ(problems("data: {dataset: numpy, path: " + kNumpyDir + "/nhwc.npz}\n" + kModel),
            (std::vector<std::string>{
                "t.yaml:1:30: key 'data.path': missing numpy arrays in '" + kNumpyDir +
                "/nhwc.npz': x_test.npy, y_test.npy (validation: test reads x_test and y_test; or "
                "set validation: holdout)"}));
  const TempDir dir;
  const std::string train = dir.write("t.csv", "a,label\n1,x\n2,y\n");
  EXPECT_EQ(problems("data: {dataset: csv, path: " + train + "}\n" + kModel),
            (std::vector<std::string>{
                "t.yaml:1:17: key 'data.dataset': dataset: csv validates on "
                "data.validation_path (another CSV file with the same header), and it is not set; "
                "set it, or set validation: holdout or none"}));
}

// What a trial's load would refuse is refused by the config check, before anything is written.
TEST(TableDataConfig, RefusesBadFilesBeforeRunning) {
  const TempDir dir;
  const std::string train = dir.write("t.csv", "a,b,label\n1,2,x\n3,,y\n");
  EXPECT_EQ(
      problems("data: {dataset: csv, path: " + train + ", validation: holdout}\n" + kModel),
      (std::vector<std::string>{"t.yaml:1:28: key 'data.path': " + train +
                                ": row 3, column 'b': empty (every value must be a number)"}));
  const std::string good = dir.write("g.csv", "a,b,label\n1,2,x\n3,4,y\n");
  const std::string val = dir.write("v.csv", "a,b,label\n1,2,z\n");
  EXPECT_EQ(
      problems("data: {dataset: csv, path: " + good + ", validation_path: " + val + "}\n" + kModel),
      (std::vector<std::string>{"t.yaml:1:28: key 'data.path': " + val +
                                ": row 2, column 'label': 'z' is not one of the classes of " +
                                good + " (x, y)"}));
  const std::string no_label = dir.write("n.csv", "a,b,class\n1,2,x\n");
  EXPECT_EQ(
      problems("data: {dataset: csv, path: " + no_label + ", validation: holdout}\n" + kModel),
      (std::vector<std::string>{"t.yaml:1:28: key 'data.path': " + no_label +
                                ": no label column 'label' (its header has a, b, class; "
                                "data.label names the label column)"}));
  // A directory of .npy files whose x and y differ in length.
  dir.write("x_train.npy", npy("|u1", "(3, 2)", "abcdef"));
  dir.write("y_train.npy", npy("|u1", "(2,)", std::string(2, '\0')));
  EXPECT_EQ(
      problems("data: {dataset: numpy, path: " + dir.path() + ", validation: holdout}\n" + kModel),
      (std::vector<std::string>{"t.yaml:1:30: key 'data.path': " + dir.path() +
                                "/x_train.npy has 3 rows, " + dir.path() +
                                "/y_train.npy 2: x and y need one row each per sample"}));
  // The test split's samples against the training split's.
  dir.write("y_train.npy", npy("|u1", "(3,)", std::string(3, '\0')));
  dir.write("x_test.npy", npy("|u1", "(1, 3)", "abc"));
  dir.write("y_test.npy", npy("|u1", "(1,)", std::string(1, '\0')));
  EXPECT_EQ(problems("data: {dataset: numpy, path: " + dir.path() + "}\n" + kModel),
            (std::vector<std::string>{"t.yaml:1:30: key 'data.path': " + dir.path() +
                                      "/x_test.npy: samples of 3 x 1 x 1 (C x H x W), " +
                                      dir.path() + "/x_train.npy's are 2 x 1 x 1"}));
}

TEST(TableDataConfig, RefusesBadWords) {
  const std::vector<std::string> layout =
      problems("data: {dataset: numpy, path: " + kNumpyDir +
               "/nhwc.npz, layout: nwhc, validation: holdout}\n");
  ASSERT_FALSE(layout.empty());
  EXPECT_NE(layout[0].find("key 'data.layout': unknown layout 'nwhc'"), std::string::npos)
      << layout[0];
  const std::vector<std::string> task =
      problems("data: {dataset: synthetic, task: regresion}\n" + std::string(kModel));
  ASSERT_FALSE(task.empty());
  EXPECT_NE(task[0].find("key 'data.task': unknown task 'regresion' (did you mean 'regression'?)"),
            std::string::npos)
      << task[0];
  const TempDir dir;
  const std::string train = dir.write("t.csv", "a,label\n1,x\n2,y\n");
  const std::vector<std::string> twice =
      problems("data: {dataset: csv, path: " + train +
               ", validation: holdout, feature_columns: [a, a]}\n" + kModel);
  ASSERT_EQ(twice.size(), 1u);
  EXPECT_NE(twice[0].find("key 'data.feature_columns.1': 'a' is listed twice"), std::string::npos)
      << twice[0];
}

}  // namespace
}  // namespace sweep::config::testing
