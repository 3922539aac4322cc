/*
 * model_file_test.cpp — the model file (trainer/model_file.h, model_rebuild.h): round trip, the
 * network rebuilt from it computes what the original computed, and every way a file can be wrong
 * (missing, truncated, too long, a flipped byte, another version, absurd sizes, a description
 * that is not this build's, layers that do not fit the arrays), each refused naming the file;
 * no symbolic link written through.
 */
#include "trainer/model_file.h"

#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "lenet_config.h"
#include "model_files.h"
#include "trainer/data/load_data.h"
#include "trainer/loop/predictor.h"
#include "trainer/train.h"

namespace sweep::trainer {
namespace {

namespace fs = std::filesystem;

std::string temp_path(const std::string& name) {
  return (fs::temp_directory_path() / ("sweep_model_" + std::to_string(::getpid()) + "_" + name))
      .string();
}

std::vector<std::uint8_t> bytes_of(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}
void put_bytes(const std::string& p, const std::vector<std::uint8_t>& b) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(b.data()), std::streamsize(b.size()));
}
// The CRC-32 of everything before the last four bytes, written into them.
void fix_crc(std::vector<std::uint8_t>& b) {
  const auto crc =
      static_cast<std::uint32_t>(crc32(crc32(0L, Z_NULL, 0), b.data(), uInt(b.size() - 4)));
  std::memcpy(b.data() + b.size() - 4, &crc, 4);
}

void expect_refused(const std::string& path, const std::string& what) {
  try {
    read_model_file(path);
    FAIL() << "read " << path << ", expected a refusal with '" << what << "'";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
  }
}

TEST(ModelFile, RoundTripsEveryField) {
  ModelFile m = testing::sample_model_file(test::lenet_model(), Shape{1, 28, 28}, 10);
  m.input.decode = ModelImageDecode{1, 28, 28, "crop"};
  const std::string path = temp_path("round.sweepmodel");
  write_model_file(path, m);
  const ModelFile back = read_model_file(path);
  EXPECT_EQ(back, m);
  EXPECT_FALSE(fs::exists(path + ".tmp"));
  check_model_network(back, path);
  fs::remove(path);
}

TEST(ModelFile, RebuiltNetworkComputesTheSame) {
  ModelSpec resnet;
  resnet.preset = Preset::resnet;
  resnet.depth = 8;
  const ModelFile m = testing::sample_model_file(resnet, Shape{3, 8, 8}, 4);
  const std::string path = temp_path("rebuilt.sweepmodel");
  write_model_file(path, m);
  Dataset in;
  in.source = "inputs";
  in.c = 3;
  in.h = in.w = 8;
  for (int i = 0; i < 5 * 3 * 64; ++i) in.images.push_back(std::uint8_t(i * 37 % 256));
  in.labels.assign(5, 0);
  auto backend = make_backend(DeviceSpec{});
  Predictor original(*backend, m, "original", 4);
  Predictor rebuilt(*backend, read_model_file(path), path, 4);
  const std::vector<float> a = original.outputs(in), b = rebuilt.outputs(in);
  ASSERT_EQ(a.size(), 5u * 4u);
  EXPECT_EQ(a, b);
  for (int r = 0; r < 5; ++r) {
    double sum = 0;
    for (int c = 0; c < 4; ++c) sum += a[std::size_t(r * 4 + c)];
    EXPECT_NEAR(sum, 1.0, 1e-5);
  }
  fs::remove(path);
}

TEST(ModelFile, RefusesMissingTruncatedLongAndCorruptFiles) {
  const ModelFile m = testing::sample_model_file(test::lenet_model(), Shape{1, 28, 28}, 10);
  const std::string path = temp_path("bad.sweepmodel");
  expect_refused(path, "missing");
  write_model_file(path, m);
  const std::vector<std::uint8_t> good = bytes_of(path);

  std::vector<std::uint8_t> b(good.begin(), good.begin() + 20);
  put_bytes(path, b);
  expect_refused(path, "truncated");
  b.assign(good.begin(), good.end() - 100);
  put_bytes(path, b);
  expect_refused(path, "truncated");
  b = good;
  b.push_back(0);
  put_bytes(path, b);
  expect_refused(path, "too long");
  b = good;
  b[b.size() / 2] ^= 0x40;
  put_bytes(path, b);
  expect_refused(path, "CRC-32");
  b = good;
  b[0] = 'X';
  put_bytes(path, b);
  expect_refused(path, "not a sweep model file");
  b = good;
  b[8] = 2;  // version
  put_bytes(path, b);
  expect_refused(path, "version 2");
  fs::remove(path);
}

TEST(ModelFile, RefusesAbsurdSizesByTheHeader) {
  const ModelFile m = testing::sample_model_file(test::lenet_model(), Shape{1, 28, 28}, 10);
  std::vector<std::uint8_t> b = model_file_bytes(m);
  const std::string path = temp_path("absurd.sweepmodel");
  const std::uint64_t huge = std::uint64_t(1) << 40;
  std::vector<std::uint8_t> p = b;
  std::memcpy(p.data() + 20, &huge, 8);  // parameters
  put_bytes(path, p);
  expect_refused(path, "at most");
  p = b;
  std::memcpy(p.data() + 12, &huge, 8);  // description bytes
  put_bytes(path, p);
  expect_refused(path, "description of");
  p = b;
  const std::uint64_t more = 1000;
  std::memcpy(p.data() + 28, &more, 8);  // state values: the file is then too short
  put_bytes(path, p);
  expect_refused(path, "truncated");
  fs::remove(path);
}

// A description edited behind a good checksum: each wrong key is named.
TEST(ModelFile, RefusesADescriptionThisBuildDoesNotWrite) {
  const ModelFile m = testing::sample_model_file(test::lenet_model(), Shape{1, 28, 28}, 10);
  const std::string path = temp_path("desc.sweepmodel");
  const auto with = [&](const std::string& from, const std::string& to, const std::string& what) {
    std::vector<std::uint8_t> b = model_file_bytes(m);
    std::string all(b.begin(), b.end());
    const auto at = all.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    ASSERT_EQ(from.size(), to.size());
    all.replace(at, from.size(), to);
    b.assign(all.begin(), all.end());
    fix_crc(b);
    put_bytes(path, b);
    expect_refused(path, what);
  };
  with("\"task\":\"classification\"", "\"task\":\"clarification!\"", "key 'task'");
  with("\"outputs\":10", "\"outputs\":-1", "key 'outputs'");
  with("\"c\":1", "\"c\":0", "key 'input.c'");
  with("\"values\":\"uint8\"", "\"values\":\"int16\"", "key 'input.values'");
  with("\"stdev\":[", "\"stdev\":1", "not valid JSON");
  with("\"layers\":", "\"layerz\":", "missing key 'layers'");
  fs::remove(path);
}

TEST(ModelFile, RefusesLayersThatDoNotFitTheArrays) {
  ModelFile m = testing::sample_model_file(test::lenet_model(), Shape{1, 28, 28}, 10);
  m.params.pop_back();
  EXPECT_THROW(check_model_network(m, "f"), Error);
  m = testing::sample_model_file(test::lenet_model(), Shape{1, 28, 28}, 10);
  m.layers[0]["type"] = "convolution";
  try {
    check_model_network(m, "f.sweepmodel");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("unknown type 'convolution'"), std::string::npos)
        << e.what();
  }
  m = testing::sample_model_file(test::lenet_model(), Shape{1, 28, 28}, 10);
  m.input.h = 3;  // the first 5x5 convolution no longer fits
  EXPECT_THROW(check_model_network(m, "f"), Error);
}

TEST(ModelFile, NeverWritesThroughASymbolicLink) {
  const ModelFile m = testing::sample_model_file(test::lenet_model(), Shape{1, 28, 28}, 10);
  const std::string path = temp_path("link.sweepmodel"), target = temp_path("target");
  put_bytes(target, {1, 2, 3});
  fs::create_symlink(target, path + ".tmp");
  EXPECT_THROW(write_model_file(path, m), Error);
  EXPECT_EQ(bytes_of(target).size(), 3u);
  fs::remove(path + ".tmp");
  fs::remove(target);
}

// A trained run's model file (here one trained on two replicas, data parallel) holds the output
// network: the predictor on the validation set scores exactly the run's final accuracy.
TEST(ModelFile, ATrainedRunWritesItsOutputNetwork) {
  TrainConfig c;
  c.data.dataset = DatasetKind::synthetic;
  c.data.synthetic = SyntheticSpec{256, 96, 4, 1, 6, 6, 5};
  c.model.preset = Preset::mlp;
  c.model.hidden = {16};
  c.training.epochs = 2;
  c.training.batch_size = 32;
  c.training.output_network = OutputNetwork::last;
  DeviceSpec cpu;
  cpu.threads = 1;
  c.replicas = {cpu, cpu};
  RunControl control;
  control.model_path = temp_path("trained.sweepmodel");
  TrainCallback quiet;
  const TrainResult r = train(c, quiet, control);
  ASSERT_EQ(r.state, RunState::completed) << r.message;
  const ModelFile m = read_model_file(control.model_path);
  EXPECT_EQ(m.output_network, "last");
  EXPECT_EQ(m.outputs, 4);
  const LoadedData data = load_data(c.data, c.training.seed);
  auto backend = make_backend(DeviceSpec{});
  Predictor p(*backend, m, control.model_path, 50);
  const std::vector<float> logits = p.logits(data.validation);
  int correct = 0;
  for (std::int64_t i = 0; i < data.validation.size(); ++i) {
    const float* row = logits.data() + i * 4;
    correct += int(std::max_element(row, row + 4) - row) == data.validation.labels[std::size_t(i)];
  }
  EXPECT_EQ(double(correct) / double(data.validation.size()), r.final_val_accuracy);
  fs::remove(control.model_path);
}

// The fuzz harness's valid seeds (tests/fuzz/make_model_file_corpus.py) are files this build
// reads and whose layers fit their arrays, so that the fuzzer starts past every check.
TEST(ModelFile, TheFuzzSeedsThatShouldReadDo) {
  for (const char* name : {"mlp-float", "every-layer", "regression"}) {
    SCOPED_TRACE(name);
    std::vector<std::uint8_t> b =
        bytes_of(std::string(SWEEP_SOURCE_DIR) + "/tests/fuzz/corpus/model_file/" + name);
    ASSERT_GT(b.size(), 1u);
    b.erase(b.begin());  // the harness's flag byte
    const ModelFile m = parse_model_file(b, name);
    EXPECT_NO_THROW(check_model_network(m, name));
  }
}

}  // namespace
}  // namespace sweep::trainer
