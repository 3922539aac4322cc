/*
 * table_data_run_test.cpp — `sweep run` end to end on the CPU on users' own data: an .npz of
 * uint8 images (a stored zip the test writes, as np.savez does) and a CSV classification table,
 * both small, generated, and learnable, so that the best trial's validation accuracy shows the
 * data reached the engine as written.
 */
#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "sweep_process_util.h"

namespace sweep::testing {
namespace {

namespace fs = std::filesystem;

using Bytes = std::vector<std::uint8_t>;

Bytes npy(const std::string& descr, const std::string& shape, const Bytes& data) {
  std::string h = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  while ((10 + h.size() + 1) % 64 != 0) h += ' ';
  h += '\n';
  // Built as text first: GCC 12 warns (-Warray-bounds, a false positive) on inserting the header
  // into a vector that holds only the preamble.
  const std::string head =
      std::string("\x93NUMPY\x01\x00", 8) + char(h.size() & 0xff) + char(h.size() >> 8) + h;
  Bytes out(head.begin(), head.end());
  out.insert(out.end(), data.begin(), data.end());
  return out;
}

void put(Bytes& b, std::uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) b.push_back(std::uint8_t(v >> (8 * i)));
}

// A zip of stored members, as np.savez writes it.
Bytes stored_zip(const std::vector<std::pair<std::string, Bytes>>& members) {
  Bytes out, dir;
  for (const auto& [name, data] : members) {
    const std::uint64_t offset = out.size();
    const auto crc = std::uint32_t(crc32(0, data.data(), uInt(data.size())));
    put(out, 0x04034b50, 4), put(out, 20, 2), put(out, 0, 8), put(out, crc, 4);
    put(out, data.size(), 4), put(out, data.size(), 4), put(out, name.size(), 2), put(out, 0, 2);
    out.insert(out.end(), name.begin(), name.end());
    out.insert(out.end(), data.begin(), data.end());
    put(dir, 0x02014b50, 4), put(dir, 20, 2), put(dir, 20, 2), put(dir, 0, 4), put(dir, 0, 4);
    put(dir, crc, 4), put(dir, data.size(), 4), put(dir, data.size(), 4);
    put(dir, name.size(), 2), put(dir, 0, 8), put(dir, 0, 4), put(dir, offset, 4);
    dir.insert(dir.end(), name.begin(), name.end());
  }
  const std::uint64_t dir_offset = out.size();
  out.insert(out.end(), dir.begin(), dir.end());
  put(out, 0x06054b50, 4), put(out, 0, 4), put(out, members.size(), 2);
  put(out, members.size(), 2), put(out, dir.size(), 4), put(out, dir_offset, 4), put(out, 0, 2);
  return out;
}

// A deterministic generator (the test must not depend on the library's).
struct Lcg {
  std::uint32_t s = 12345;
  std::uint32_t next() { return s = s * 1664525u + 1013904223u; }
  int below(int n) { return int((next() >> 8) % std::uint32_t(n)); }
};

// n grey 8 x 8 images of 3 classes: class k is bright in columns 2k and 2k + 1, noise elsewhere.
void images(int n, Lcg& rng, Bytes& x, Bytes& y) {
  for (int i = 0; i < n; ++i) {
    const int k = i % 3;
    y.push_back(std::uint8_t(k));
    for (int r = 0; r < 8; ++r)
      for (int c = 0; c < 8; ++c)
        x.push_back(std::uint8_t(c / 2 == k ? 180 + rng.below(70) : rng.below(80)));
  }
}

// A sweep of one trial of the built-in MLP on `data`, under dir/runs/NAME; its output.
std::string run_one(const fs::path& dir, const std::string& name, const std::string& data,
                    int& exit_code, const std::string& metric = "val_accuracy, goal: maximize") {
  std::ofstream(dir / (name + ".yaml"))
      << "name: " << name << "\n"
      << "data: " << data << "\n"
      << "model: {preset: mlp, hidden: [32]}\n"
      << "training: {optimizer: adam, learning_rate: 0.01, epochs: 6, batch_size: 16, seed: 1}\n"
      << "sweep: {method: grid, metric: {name: " << metric << "},\n"
      << "        parameters: {training.batch_size: {values: [16]}}}\n"
      << "resources: {execution: cpu, cpu_slots: 1, cpu_threads: 1}\n"
      << "output: {dir: " << (dir / "runs").string() << "}\n";
  const pid_t pid = spawn_sweep({"run", (dir / (name + ".yaml")).string()}, dir / (name + ".log"));
  exit_code = wait_exit(pid);
  return slurp(dir / (name + ".log"));
}

// The best trial's value from run's last line ("best: trial 0, val_accuracy 0.97 ...").
double best_value(const std::string& out, const std::string& metric = "val_accuracy") {
  const std::string lead = "best: trial 0, " + metric + " ";
  const std::size_t at = out.rfind(lead);
  return at == std::string::npos ? -1 : std::atof(out.c_str() + at + lead.size());
}

TEST(TableDataRun, AnNpzOfUint8ImagesTrains) {
  const fs::path dir = fresh_dir("sweep_npz_run");
  Lcg rng;
  Bytes x_train, y_train, x_test, y_test;
  images(300, rng, x_train, y_train);
  images(90, rng, x_test, y_test);
  const Bytes zip = stored_zip({{"x_train.npy", npy("|u1", "(300, 8, 8)", x_train)},
                                {"y_train.npy", npy("|u1", "(300,)", y_train)},
                                {"x_test.npy", npy("|u1", "(90, 1, 8, 8)", x_test)},
                                {"y_test.npy", npy("|u1", "(90,)", y_test)}});
  std::ofstream((dir / "images.npz").string(), std::ios::binary)
      .write(reinterpret_cast<const char*>(zip.data()), std::streamsize(zip.size()));
  int code = -1;
  const std::string out =
      run_one(dir, "npz", "{dataset: numpy, path: " + (dir / "images.npz").string() + "}", code);
  ASSERT_EQ(code, 0) << out;
  EXPECT_GT(best_value(out), 0.9) << out;
  fs::remove_all(dir);
}

TEST(TableDataRun, ACsvClassificationTableTrains) {
  const fs::path dir = fresh_dir("sweep_csv_run");
  Lcg rng;
  const char* names[] = {"setosa", "versicolor", "virginica"};
  for (const char* file : {"train.csv", "val.csv"}) {
    std::ofstream csv(dir / file);
    csv << "f1,f2,f3,species\n";
    for (int i = 0; i < (file[0] == 't' ? 240 : 60); ++i) {
      const int k = i % 3;
      // Class k centred at 10k on f1 and -5k on f3; f2 is noise.
      csv << 10 * k + rng.below(400) / 100.0 << "," << rng.below(1000) / 10.0 << ","
          << -5 * k + rng.below(200) / 100.0 << "," << names[k] << "\n";
    }
  }
  int code = -1;
  const std::string out =
      run_one(dir, "csv",
              "{dataset: csv, path: " + (dir / "train.csv").string() +
                  ", validation_path: " + (dir / "val.csv").string() + ", label: species}",
              code);
  ASSERT_EQ(code, 0) << out;
  EXPECT_GT(best_value(out), 0.9) << out;
  fs::remove_all(dir);
}

// y = 3 f1 - 2 f2 (+ noise of +-0.05); the targets' spread is about 3.5, so an RMSE under 1 is
// well past predicting their mean.
TEST(TableDataRun, ACsvRegressionTableTrains) {
  const fs::path dir = fresh_dir("sweep_csv_regression_run");
  Lcg rng;
  for (const char* file : {"train.csv", "val.csv"}) {
    std::ofstream csv(dir / file);
    csv << "f1,f2,price\n";
    for (int i = 0; i < (file[0] == 't' ? 400 : 100); ++i) {
      const double f1 = rng.below(1000) / 1000.0, f2 = rng.below(1000) / 1000.0;
      csv << f1 << "," << f2 << "," << 3 * f1 - 2 * f2 + (rng.below(100) - 50) / 1000.0 << "\n";
    }
  }
  int code = -1;
  const std::string out = run_one(dir, "regression",
                                  "{dataset: csv, path: " + (dir / "train.csv").string() +
                                      ", validation_path: " + (dir / "val.csv").string() +
                                      ", label: price, task: regression}",
                                  code, "val_rmse, goal: minimize");
  ASSERT_EQ(code, 0) << out;
  const double rmse = best_value(out, "val_rmse");
  EXPECT_GE(rmse, 0) << out;
  EXPECT_LT(rmse, 0.3) << out;
  fs::remove_all(dir);
}

// The worked examples of docs/data.md (examples/tables/) as shipped, on the data make_data.py
// writes (into a scratch directory, the configs' paths set to it), two epochs each. Skips,
// saying why, without Debian's python3-sklearn.
TEST(TableDataRun, TheReadmeExamplesRun) {
  if (std::system("/usr/bin/python3 -c 'import numpy, sklearn' > /dev/null 2>&1") != 0)
    GTEST_SKIP() << "/usr/bin/python3 with numpy and scikit-learn (python3-sklearn) is needed";
  const fs::path dir = fresh_dir("sweep_table_examples");
  const std::string examples = std::string(SWEEP_SOURCE_DIR) + "/examples/tables/";
  const std::string make =
      "/usr/bin/python3 " + examples + "make_data.py " + (dir / "data").string() + " > /dev/null";
  ASSERT_EQ(std::system(make.c_str()), 0);
  const auto data = [&](const std::string& name) { return (dir / "data" / name).string(); };
  const std::vector<std::vector<std::string>> runs = {
      {"digits-npz", "data.path=" + data("digits.npz")},
      {"csv-classification", "data.path=" + data("classification.csv"),
       "data.validation_path=" + data("classification-val.csv")},
      {"csv-regression", "data.path=" + data("regression.csv"),
       "data.validation_path=" + data("regression-val.csv")}};
  for (const auto& run : runs) {
    std::vector<std::string> args = {"run",   examples + run[0] + ".yaml",
                                     "--out", (dir / "runs").string(),
                                     "--set", "training.epochs=2"};
    for (std::size_t i = 1; i < run.size(); ++i) args.insert(args.end(), {"--set", run[i]});
    const fs::path log = dir / (run[0] + ".log");
    ASSERT_EQ(wait_exit(spawn_sweep(args, log)), 0) << slurp(log);
    EXPECT_NE(slurp(log).find(" completed\n"), std::string::npos) << slurp(log);
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace sweep::testing
