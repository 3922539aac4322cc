/*
 * predict_command_test.cpp — `sweep predict` and `sweep export-model` on a finished sweep, run as
 * the binary: predict on the validation images of a trial gives exactly the accuracy the store
 * holds for it (output_network last, so the stored value is the last validation of the very
 * weights in the model file); the model file is in the trial's directory; export-model writes an
 * ONNX file and an .npz; a trial without a model and a bad input are refused with the reason.
 */
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "store/store.h"
#include "sweep/run/sweep_layout.h"
#include "sweep_process_util.h"
#include "trainer/data/idx_reader.h"

namespace sweep {
namespace {

namespace fs = std::filesystem;

constexpr const char* kFashion = "/usr/share/datasets/fashion-mnist";
constexpr int kValidation = 300;

// A uint8 .npy (format 1.0) of shape (n, c, h, w).
void write_npy(const fs::path& path, const std::uint8_t* data, int n, int c, int h, int w) {
  std::string dict = "{'descr': '|u1', 'fortran_order': False, 'shape': (" + std::to_string(n) +
                     ", " + std::to_string(c) + ", " + std::to_string(h) + ", " +
                     std::to_string(w) + "), }";
  dict.append((64 - (10 + dict.size() + 1) % 64) % 64, ' ');
  dict += '\n';
  std::ofstream out(path, std::ios::binary);
  out.write("\x93NUMPY\x01\x00", 8);
  const std::uint16_t len = std::uint16_t(dict.size());
  out.write(reinterpret_cast<const char*>(&len), 2);
  out << dict;
  out.write(reinterpret_cast<const char*>(data), std::streamsize(std::size_t(n) * c * h * w));
}

struct Ran {
  int code = -1;
  std::string out;
};
Ran sweep_cli(const std::vector<std::string>& args, const fs::path& dir) {
  const fs::path log = dir / "cli.log";
  Ran r;
  r.code = testing::wait_exit(testing::spawn_sweep(args, log));
  r.out = testing::slurp(log);
  return r;
}

class PredictCommand : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!fs::exists(fs::path(kFashion) / "t10k-images-idx3-ubyte.gz")) return;
    dir_ = testing::fresh_dir("sweep_predict").string();
    const fs::path cfg = fs::path(dir_) / "predict.yaml";
    std::ofstream(cfg) << "name: predictme\n"
                          "data: {dataset: fashion-mnist, path: "
                       << kFashion
                       << ", validation: test, train_limit: 600, test_limit: " << kValidation
                       << "}\n"
                          "model: {preset: lenet}\n"
                          "training: {epochs: 1, batch_size: 50, learning_rate: 0.01, "
                          "output_network: last, seed: 3}\n"
                          "sweep:\n  method: grid\n  metric: {name: val_accuracy, goal: maximize}\n"
                          "  parameters:\n    training.learning_rate: {values: [0.01]}\n"
                          "resources: {execution: cpu, cpu_slots: 1}\n";
    const Ran run = sweep_cli({"run", cfg.string(), "--out", dir_ + "/runs"}, fs::path(dir_));
    ran_ = run.code == 0;
    if (!ran_) std::cerr << run.out;
  }
  static void TearDownTestSuite() {
    if (!dir_.empty()) fs::remove_all(dir_);
  }
  void SetUp() override {
    if (dir_.empty()) GTEST_SKIP() << "Fashion-MNIST is not installed (dataset-fashion-mnist)";
    ASSERT_TRUE(ran_);
  }
  static inline std::string dir_;
  static inline bool ran_ = false;
};

TEST_F(PredictCommand, OnTheValidationImagesGivesTheStoredAccuracyExactly) {
  const fs::path runs = fs::path(dir_) / "runs";
  const Store store((runs / "predictme" / "sweep.db").string(), {.read_only = true});
  const auto trials = store.trials(store.sweep_named("predictme").id);
  ASSERT_EQ(trials.size(), 1u);
  const double stored = trials[0].summary.at("final_val_accuracy").get<double>();
  ASSERT_TRUE(fs::exists(run::model_in(run::trial_dir_in(runs / "predictme", trials[0].number))));

  const trainer::Dataset test = trainer::read_idx_split(kFashion, "t10k", 10);
  const fs::path npy = fs::path(dir_) / "validation.npy";
  write_npy(npy, test.images.data(), kValidation, 1, 28, 28);
  const Ran r = sweep_cli({"predict", "predictme", "--out", runs.string(), "--input", npy.string()},
                          fs::path(dir_));
  ASSERT_EQ(r.code, 0) << r.out;
  std::istringstream lines(r.out);
  std::string line;
  std::getline(lines, line);
  EXPECT_EQ(line, "input,class,probability");
  int rows = 0, correct = 0;
  while (std::getline(lines, line)) {
    if (line.rfind("wrote", 0) == 0 || line.empty()) continue;
    const auto a = line.find(','), b = line.find(',', a + 1);
    ASSERT_NE(b, std::string::npos) << line;
    EXPECT_EQ(line.substr(0, a), std::to_string(rows));
    const int cls = std::stoi(line.substr(a + 1, b - a - 1));
    const double p = std::stod(line.substr(b + 1));
    EXPECT_GT(p, 0.1);
    EXPECT_LE(p, 1.0);
    correct += cls == test.labels[std::size_t(rows)];
    ++rows;
  }
  EXPECT_EQ(rows, kValidation);
  EXPECT_EQ(double(correct) / double(kValidation), stored)
      << correct << " of " << kValidation << " right; the store holds " << stored;
}

TEST_F(PredictCommand, ExportsOnnxAndNpz) {
  const fs::path runs = fs::path(dir_) / "runs";
  const fs::path onnx = fs::path(dir_) / "m.onnx", npz = fs::path(dir_) / "m.npz";
  Ran r = sweep_cli(
      {"export-model", "predictme", "--out", runs.string(), "--best", "-o", onnx.string()},
      fs::path(dir_));
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("wrote " + onnx.string() + " (onnx, trial"), std::string::npos) << r.out;
  EXPECT_GT(fs::file_size(onnx), 4u * 400000u);  // LeNet's 431,080 weights
  r = sweep_cli({"export-model", "predictme", "--out", runs.string(), "-o", npz.string()},
                fs::path(dir_));
  ASSERT_EQ(r.code, 0) << r.out;
  std::ifstream in(npz, std::ios::binary);
  char magic[4] = {};
  in.read(magic, 4);
  EXPECT_EQ(std::memcmp(magic, "PK\x03\x04", 4), 0);
}

TEST_F(PredictCommand, RefusesATrialWithoutAModelAndABadInput) {
  const fs::path runs = fs::path(dir_) / "runs";
  Ran r = sweep_cli(
      {"predict", "predictme", "--out", runs.string(), "--trial", "99", "--input", "x.npy"},
      fs::path(dir_));
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.out.find("has no trial 99"), std::string::npos) << r.out;
  const fs::path bad = fs::path(dir_) / "bad.npy";
  const std::vector<std::uint8_t> pixels(2 * 3 * 5 * 5, 7);
  write_npy(bad, pixels.data(), 2, 3, 5, 5);
  r = sweep_cli({"predict", "predictme", "--out", runs.string(), "--input", bad.string()},
                fs::path(dir_));
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.out.find(bad.string() + ": shape (2, 3, 5, 5), expected (N, 1, 28, 28)"),
            std::string::npos)
      << r.out;
}

// A folder of images and a CSV, each trained and then predicted on its validation set: the class
// names come back, and the accuracy is the stored one, exactly.
class PredictOwnData : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = testing::fresh_dir("sweep_predict_own"); }
  void TearDown() override { fs::remove_all(dir_); }

  // A binary PGM of 6x6 grey pixels around `level`.
  static void write_pgm(const fs::path& path, int level, int seed) {
    std::ofstream out(path, std::ios::binary);
    out << "P5\n6 6\n255\n";
    for (int i = 0; i < 36; ++i)
      out.put(char(std::clamp(level + (i * 7 + seed * 13) % 41 - 20, 0, 255)));
  }
  // val_accuracy of the sweep's one trial, as stored.
  double stored_accuracy(const std::string& name) const {
    const Store store((dir_ / "runs" / name / "sweep.db").string(), {.read_only = true});
    return store.trials(store.sweep_named(name).id)
        .at(0)
        .summary.at("final_val_accuracy")
        .get<double>();
  }
  std::string config(const std::string& name, const std::string& data) const {
    const fs::path cfg = dir_ / (name + ".yaml");
    std::ofstream(cfg) << "name: " << name << "\ndata: " << data
                       << "\nmodel: {preset: mlp, hidden: [8]}\n"
                          "training: {epochs: 2, batch_size: 8, learning_rate: 0.02, "
                          "output_network: last}\n"
                          "sweep:\n  method: grid\n  metric: {name: val_accuracy, goal: maximize}\n"
                          "  parameters:\n    training.seed: {values: [1]}\n"
                          "resources: {execution: cpu, cpu_slots: 1}\n";
    return cfg.string();
  }
  fs::path dir_;
};

TEST_F(PredictOwnData, AFolderOfImagesAndACsv) {
  // Folders: two classes of grey levels that overlap a little, train and validation.
  for (const char* split : {"train", "val"})
    for (int cls = 0; cls < 2; ++cls) {
      const fs::path d = dir_ / split / (cls == 0 ? "dark" : "light");
      fs::create_directories(d);
      for (int i = 0; i < 12; ++i) write_pgm(d / (std::to_string(i) + ".pgm"), 110 + 30 * cls, i);
    }
  Ran r = sweep_cli({"run",
                     config("imgs", "{dataset: folder, path: " + (dir_ / "train").string() +
                                        ", validation_path: " + (dir_ / "val").string() + "}"),
                     "--out", (dir_ / "runs").string()},
                    dir_);
  ASSERT_EQ(r.code, 0) << r.out;
  int right = 0, rows = 0;
  for (const char* cls : {"dark", "light"}) {
    r = sweep_cli({"predict", "imgs", "--out", (dir_ / "runs").string(), "--input",
                   (dir_ / "val" / cls).string()},
                  dir_);
    ASSERT_EQ(r.code, 0) << r.out;
    std::istringstream lines(r.out);
    std::string line;
    while (std::getline(lines, line)) {
      if (line.find(".pgm,") == std::string::npos) continue;
      ++rows;
      right += line.find(std::string(".pgm,") + cls + ",") != std::string::npos;
    }
  }
  EXPECT_EQ(rows, 24);
  EXPECT_EQ(double(right) / 24.0, stored_accuracy("imgs"));

  // A CSV: the class is the sign of a + b; its validation file predicted row by row.
  for (const char* split : {"train", "val"}) {
    std::ofstream csv(dir_ / (std::string(split) + ".csv"));
    csv << "a,b,kind\n";
    for (int i = 0; i < 40; ++i) {
      const double a = ((i * 37) % 19 - 9) / 3.0, b = ((i * 11 + (split[0] == 'v')) % 13 - 6) / 2.0;
      csv << a << "," << b << "," << (a + b > 0 ? "up" : "down") << "\n";
    }
  }
  r = sweep_cli(
      {"run",
       config("rows", "{dataset: csv, label: kind, path: " + (dir_ / "train.csv").string() +
                          ", validation_path: " + (dir_ / "val.csv").string() + "}"),
       "--out", (dir_ / "runs").string()},
      dir_);
  ASSERT_EQ(r.code, 0) << r.out;
  r = sweep_cli({"predict", "rows", "--out", (dir_ / "runs").string(), "--input",
                 (dir_ / "val.csv").string()},
                dir_);
  ASSERT_EQ(r.code, 0) << r.out;
  std::ifstream val(dir_ / "val.csv");
  std::string truth, line;
  std::getline(val, truth);  // the header
  std::istringstream lines(r.out);
  std::getline(lines, line);
  EXPECT_EQ(line, "input,class,probability");
  right = rows = 0;
  while (std::getline(lines, line) && std::getline(val, truth)) {
    const std::string want = truth.substr(truth.rfind(',') + 1);
    const auto a = line.find(','), b = line.find(',', a + 1);
    ASSERT_NE(b, std::string::npos) << line;
    right += line.substr(a + 1, b - a - 1) == want;
    ++rows;
  }
  EXPECT_EQ(rows, 40);
  EXPECT_EQ(double(right) / 40.0, stored_accuracy("rows"));

  // New rows come without their label, columns in another order: the model's columns are picked
  // by name, and the predictions are the same.
  {
    std::ifstream in(dir_ / "val.csv");
    std::ofstream out(dir_ / "unlabelled.csv");
    std::getline(in, line);
    out << "b,a\n";
    while (std::getline(in, line)) {
      const auto a = line.find(','), b = line.find(',', a + 1);
      out << line.substr(a + 1, b - a - 1) << "," << line.substr(0, a) << "\n";
    }
  }
  const Ran unlabelled = sweep_cli({"predict", "rows", "--out", (dir_ / "runs").string(), "--input",
                                    (dir_ / "unlabelled.csv").string()},
                                   dir_);
  ASSERT_EQ(unlabelled.code, 0) << unlabelled.out;
  EXPECT_EQ(unlabelled.out, r.out);
}

}  // namespace
}  // namespace sweep
