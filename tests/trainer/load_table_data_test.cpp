/*
 * load_table_data_test.cpp — load_data on `dataset: numpy` and `dataset: csv`: the splits, the
 * validation file, the limits, and the caches keyed on a single file (an edited CSV is read
 * again, a changed setting is not served from the cache).
 */
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "common/check.h"
#include "tests/test_dir.h"
#include "trainer/data/load_data.h"

namespace sweep::trainer {
namespace {

namespace fs = std::filesystem;

const std::string kNumpyDir = std::string(SWEEP_SOURCE_DIR) + "/tests/trainer/numpy";

class TempDir : public sweep::testing::TestDir {
 public:
  TempDir() : TestDir("sweep_load_table") {}
};

TEST(LoadTableData, ReadsAnNpzsSplitsWithItsLimits) {
  DataSpec spec;
  spec.dataset = DatasetKind::numpy;
  spec.path = kNumpyDir + "/images_compressed.npz";
  spec.normalize = false;
  spec.train_limit = 3;
  const LoadedData d = load_data(spec, 1);
  EXPECT_EQ(d.train.size(), 3);
  EXPECT_EQ(d.validation.size(), 2);
  EXPECT_EQ(d.validation.classes, 3);
  EXPECT_EQ(d.validation.images[0], 100);
}

TEST(LoadTableData, ReadsACsvAndItsValidationFile) {
  const TempDir dir;
  DataSpec spec;
  spec.dataset = DatasetKind::csv;
  spec.path = dir.write("t.csv", "a,b,label\n1,2,dog\n3,4,cat\n5,6,dog\n");
  spec.validation_path = dir.write("v.csv", "a,b,label\n7,8,cat\n");
  const LoadedData d = load_data(spec, 1);
  EXPECT_EQ(d.train.class_names, (std::vector<std::string>{"cat", "dog"}));
  EXPECT_EQ(d.train.c, 2);
  EXPECT_EQ(d.validation.labels, (std::vector<std::uint8_t>{0}));
  EXPECT_EQ(d.validation.features, (std::vector<float>{7, 8}));
  // Without a validation file, validation: test has nothing to read.
  spec.validation_path.clear();
  EXPECT_THROW(load_data(spec, 1), Error);
  spec.validation = Validation::none;
  EXPECT_EQ(load_data(spec, 1).train.size(), 3);
}

TEST(LoadTableData, AnEditedCsvAndAChangedSettingAreReadAgain) {
  const TempDir dir;
  DataSpec spec;
  spec.dataset = DatasetKind::csv;
  spec.validation = Validation::none;
  spec.normalize = false;
  spec.path = dir.write("t.csv", "a,b,label\n1,2,x\n3,4,y\n");
  const auto first = load_data_shared(spec, 1);
  EXPECT_EQ(first, load_data_shared(spec, 1));
  EXPECT_EQ(first->train.features[0], 1.0f);
  // Another size (the stamp is the file's size and time).
  dir.write("t.csv", "a,b,label\n10,2,x\n3,4,y\n5,6,x\n");
  const auto edited = load_data_shared(spec, 1);
  EXPECT_EQ(edited->train.size(), 3);
  EXPECT_EQ(edited->train.features[0], 10.0f);
  // Another label column: not the cached read of the first.
  spec.label = std::string(1, 'b');  // not = "b": GCC 12 -Wrestrict false positive at -O3
  spec.feature_columns = {"a"};
  spec.task = Task::regression;
  const LoadedData by_b = load_data(spec, 1);
  EXPECT_EQ(by_b.train.targets, (std::vector<float>{2, 4, 6}));
  EXPECT_EQ(by_b.train.features, (std::vector<float>{10, 3, 5}));
}

}  // namespace
}  // namespace sweep::trainer
