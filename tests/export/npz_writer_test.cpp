/*
 * npz_writer_test.cpp — the .npz writer (trainer/export/npz_writer.h): numpy.load reads every
 * array of a model's archive with its name, shape and values; names a zip entry cannot hold are
 * refused.
 */
#include "trainer/export/npz_writer.h"

#include <gtest/gtest.h>

#include <sstream>

#include "../trainer/model_files.h"
#include "export_runner.h"

namespace sweep::trainer {
namespace {

TEST(NpzWriter, NumpyLoadsEveryTensorByItsLayerName) {
  ModelSpec s;
  s.preset = Preset::resnet;
  s.depth = 8;
  const ModelFile m = testing::sample_model_file(s, Shape{3, 8, 8}, 4);
  const std::string python = testing::python_with("numpy");
  if (python.empty()) GTEST_SKIP() << "python3-numpy is not installed";
  const std::string path =
      (testing::fs::temp_directory_path() / ("sweep_npz_" + std::to_string(::getpid()) + ".npz"))
          .string();
  const std::string bytes = model_npz_bytes(m, "model");
  std::ofstream(path, std::ios::binary).write(bytes.data(), std::streamsize(bytes.size()));
  // Every array as "name shape sum-of-values" on a line, in the archive's order.
  const auto r = testing::run_command(
      python +
      " -c 'import numpy, sys; z = numpy.load(sys.argv[1]); "
      "[print(k, tuple(z[k].shape), z[k].dtype, repr(float(z[k].astype(numpy.float64).sum()))) "
      "for k in z.files]' " +
      testing::quoted(path));
  ASSERT_EQ(r.status, 0) << r.output;
  std::string expected;
  const std::vector<ExportLayer> layers = exported_layers(m, "model");
  std::vector<const ExportTensor*> tensors = all_tensors(layers);
  const ExportTensor scale{"input_scale", {1}, {m.input.scale}};
  const ExportTensor mean{"input_mean", {3}, m.input.mean}, stdev{"input_std", {3}, m.input.stdev};
  tensors.push_back(&scale);
  tensors.push_back(&mean);
  tensors.push_back(&stdev);
  std::size_t values = 0;
  for (const ExportTensor* t : tensors) {
    std::string shape = "(";
    for (std::size_t i = 0; i < t->dims.size(); ++i)
      shape += std::to_string(t->dims[i]) + (t->dims.size() == 1      ? ","
                                             : i + 1 < t->dims.size() ? ", "
                                                                      : "");
    double sum = 0;
    for (float v : t->values) sum += double(v);
    values += t->values.size();
    char text[64];
    std::snprintf(text, sizeof text, "%.17g", sum);
    (void)text;
    expected += t->name + " " + shape + ") float32\n";
  }
  EXPECT_EQ(values, m.params.size() + m.state.size() + 7);
  // Names, shapes and types line for line; sums checked loosely (numpy sums in its own order).
  std::string got_names;
  std::istringstream lines(r.output);
  std::string line;
  std::size_t i = 0;
  while (std::getline(lines, line)) {
    const auto last = line.rfind(' ');
    got_names += line.substr(0, last) + "\n";
    ASSERT_LT(i, tensors.size());
    double sum = 0;
    for (float v : tensors[i]->values) sum += double(v);
    EXPECT_NEAR(std::stod(line.substr(last + 1)), sum, 1e-6 * (1 + std::abs(sum))) << line;
    ++i;
  }
  EXPECT_EQ(got_names, expected);
  EXPECT_NE(expected.find("3.body.0.weight (16, 16, 3, 3) float32"), std::string::npos) << expected;
  EXPECT_NE(expected.find("1.running_var (16,) float32"), std::string::npos) << expected;
  testing::fs::remove(path);
}

TEST(NpzWriter, RefusesNamesAZipEntryCannotHold) {
  const ExportTensor a{"a/b", {1}, {1.f}}, b{"", {1}, {1.f}}, c{"c", {1}, {1.f}};
  EXPECT_THROW(npz_bytes({&a}), Error);
  EXPECT_THROW(npz_bytes({&b}), Error);
  EXPECT_THROW(npz_bytes({&c, &c}), Error);
  EXPECT_NO_THROW(npz_bytes({&c}));
}

}  // namespace
}  // namespace sweep::trainer
