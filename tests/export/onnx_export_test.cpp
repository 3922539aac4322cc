/*
 * onnx_export_test.cpp — the ONNX export (trainer/export/onnx_export.h) of LeNet, the convnet
 * preset, a ResNet-20, an MLP (with dropout, on float values), a regression MLP and a custom list
 * with every other layer setting (strided and padded convolutions, padded max and average
 * pooling, a residual block with a projection shortcut and none after the sum): each passes
 * ONNX's checker (in the exporter, and python3-onnx's onnx.checker when it is installed), and
 * ONNX Runtime's outputs on 1,000 raw inputs equal sweep's own (trainer/loop/predictor.h, the
 * validation pass's forward) within 1e-4. ONNX Runtime is onnxruntime-node, which
 * scripts/install-deps --tests installs; without node or it, the comparison is skipped, saying so.
 */
#include "trainer/export/onnx_export.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "../trainer/lenet_config.h"
#include "../trainer/model_files.h"
#include "export_runner.h"
#include "trainer/loop/predictor.h"

namespace sweep::trainer {
namespace {

using testing::quoted;
namespace fs = std::filesystem;

std::string temp_path(const std::string& name) {
  return (fs::temp_directory_path() / ("sweep_onnx_" + std::to_string(::getpid()) + "_" + name))
      .string();
}

// n raw inputs for `m`: pixels 0..255 (as uint8 and as float), or float values.
Dataset raw_inputs(const ModelFile& m, int n, std::uint64_t seed) {
  Dataset d;
  d.source = "test inputs";
  d.c = m.input.c;
  d.h = m.input.h;
  d.w = m.input.w;
  std::mt19937_64 rng(seed);
  const std::size_t values = std::size_t(n) * std::size_t(d.image_bytes());
  if (m.input.is_float) {
    std::normal_distribution<float> g(0.f, 2.f);
    for (std::size_t i = 0; i < values; ++i) d.features.push_back(g(rng));
  } else {
    for (std::size_t i = 0; i < values; ++i) d.images.push_back(std::uint8_t(rng() % 256));
  }
  d.labels.assign(std::size_t(n), 0);
  return d;
}

void check_export(const std::string& what, const ModelFile& m, int n = 1000) {
  SCOPED_TRACE(what);
  const std::string model_path = temp_path(what + ".onnx");
  const std::string bytes = onnx_model_bytes(m, what);  // runs onnx::checker::check_model
  {
    std::ofstream out(model_path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), std::streamsize(bytes.size()));
  }
  if (const std::string python = testing::python_with("onnx"); !python.empty()) {
    const auto r = testing::run_command(
        python +
        " -c 'import onnx, sys; m = onnx.load(sys.argv[1]); onnx.checker.check_model(m, "
        "full_check=True); print(m.opset_import[0].version)' " +
        quoted(model_path));
    EXPECT_EQ(r.status, 0) << r.output;
    EXPECT_EQ(r.output, std::to_string(kOnnxOpset) + "\n");
  } else {
    std::cout << "[ note ] python3-onnx is not installed: onnx.checker not run\n";
  }

  const std::string modules = testing::onnxruntime_node_modules();
  if (modules.empty()) {
    fs::remove(model_path);
    GTEST_SKIP() << "node or onnxruntime-node is missing (scripts/install-deps --tests installs "
                    "it; SWEEP_ONNXRUNTIME_NODE names another node_modules): ONNX Runtime not run";
  }
  const Dataset in = raw_inputs(m, n, 99);
  std::vector<float> raw = in.features;
  if (raw.empty()) raw.assign(in.images.begin(), in.images.end());
  const std::string in_path = temp_path(what + ".in"), out_path = temp_path(what + ".out");
  testing::write_floats(in_path, raw);
  const auto r = testing::run_command(
      "NODE_PATH=" + quoted(modules) + " node " +
      quoted(std::string(SWEEP_SOURCE_DIR) + "/tests/export/onnx_run.js") + " " +
      quoted(model_path) + " " + quoted(in_path) + " " + std::to_string(n) + " " +
      std::to_string(m.input.c) + " " + std::to_string(m.input.h) + " " +
      std::to_string(m.input.w) + " " + quoted(out_path));
  ASSERT_EQ(r.status, 0) << r.output;
  const std::vector<float> onnx = testing::read_floats(out_path);

  auto backend = make_backend(DeviceSpec{});
  Predictor predictor(*backend, m, what, 128);
  const std::vector<float> ours = predictor.outputs(in);
  ASSERT_EQ(onnx.size(), ours.size());
  double worst = 0;
  for (std::size_t i = 0; i < ours.size(); ++i)
    worst = std::max(worst, std::abs(double(onnx[i]) - double(ours[i])));
  EXPECT_LE(worst, 1e-4) << "max abs difference over " << n << " inputs";
  std::cout << "[ note ] " << what << ": ONNX Runtime vs sweep, max abs difference " << worst
            << " over " << n << " inputs\n";
  for (const auto& p : {model_path, in_path, out_path}) fs::remove(p);
}

TEST(OnnxExport, LeNet) {
  check_export("lenet", testing::sample_model_file(test::lenet_model(), Shape{1, 28, 28}, 10));
}

TEST(OnnxExport, ConvNet) {
  ModelSpec s;
  s.preset = Preset::convnet;
  s.net_width = 8;
  check_export("convnet", testing::sample_model_file(s, Shape{3, 16, 16}, 10));
}

TEST(OnnxExport, ResNet20) {
  ModelSpec s;
  s.preset = Preset::resnet;
  s.depth = 20;
  check_export("resnet20", testing::sample_model_file(s, Shape{3, 16, 16}, 10), 300);
}

TEST(OnnxExport, MlpOnFloatValues) {
  ModelSpec s;
  s.preset = Preset::mlp;
  s.hidden = {32, 16};
  s.dropout = 0.25;
  check_export("mlp", testing::sample_model_file(s, Shape{12, 1, 1}, 3, true));
}

TEST(OnnxExport, RegressionMlp) {
  ModelSpec s;
  s.preset = Preset::mlp;
  s.hidden = {16};
  check_export("regression", testing::sample_model_file(s, Shape{5, 1, 1}, 0, true));
}

LayerSpec layer(LayerKind k, std::map<std::string, double> num = {},
                std::map<std::string, std::string> str = {}) {
  return LayerSpec{k, std::move(num), std::move(str), {}};
}

TEST(OnnxExport, EveryLayerSetting) {
  ModelSpec s;
  s.preset = Preset::none;
  LayerSpec block = layer(LayerKind::residual, {}, {{"activation", "none"}});
  block.layers = {
      layer(LayerKind::conv, {{"filters", 6}, {"kernel", 3}, {"stride", 2}, {"padding", 1}}),
      layer(LayerKind::batchnorm, {{"eps", 1e-3}}), layer(LayerKind::relu)};
  s.layers = {
      layer(LayerKind::conv, {{"filters", 4}, {"kernel", 3}, {"stride", 2}, {"padding", 2}}),
      layer(LayerKind::maxpool, {{"size", 3}, {"stride", 1}, {"padding", 1}}),
      layer(LayerKind::avgpool, {{"size", 2}, {"stride", 1}, {"padding", 1}}),
      block,
      layer(LayerKind::conv, {{"filters", 5}, {"kernel", 1}, {"bias", 0}}, {{"padding", "valid"}}),
      layer(LayerKind::flatten),
      layer(LayerKind::dense, {{"units", 7}, {"bias", 0}}),
      layer(LayerKind::batchnorm),
      layer(LayerKind::dropout, {{"rate", 0.5}}),
      layer(LayerKind::dense, {{"units", 4}})};
  check_export("layers", testing::sample_model_file(s, Shape{2, 11, 9}, 4));
}

TEST(OnnxExport, CarriesClassNamesAndTheTrial) {
  ModelFile m = testing::sample_model_file(test::lenet_model(), Shape{1, 28, 28}, 10);
  m.class_names[3] = "dress \"3\"";
  const std::string path = temp_path("meta.onnx");
  const std::string bytes = onnx_model_bytes(m, "meta");
  std::ofstream(path, std::ios::binary).write(bytes.data(), std::streamsize(bytes.size()));
  const std::string python = testing::python_with("onnx");
  if (python.empty()) GTEST_SKIP() << "python3-onnx is not installed";
  const auto r = testing::run_command(
      python +
      " -c 'import onnx, sys, json; m = onnx.load(sys.argv[1]); "
      "p = {e.key: e.value for e in m.metadata_props}; "
      "print(json.loads(p[\"class_names\"])[3], p[\"trial\"], p[\"sweep\"], p[\"task\"])' " +
      quoted(path));
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.output, "dress \"3\" 3 tests classification\n");
  fs::remove(path);
}

}  // namespace
}  // namespace sweep::trainer
