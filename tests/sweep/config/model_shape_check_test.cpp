// The model checked against the data's images before anything runs: each layer that cannot take
// its input is one line at its entry in model.layers (a preset's at model.preset), with the
// trainer's reason; a swept or --set value behind it is reported at that value; a base problem
// stays one line however many trials share it; built-in models and the shipped configs pass; and
// the check costs microseconds per trial.
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "config_test_util.h"
#include "trainer/data/data_shape.h"
#include "trainer/models.h"

namespace sweep::config::testing {
namespace {

const std::string kData =
    "data: {dataset: synthetic, synthetic: {train_size: 64, test_size: 32}}\n";
const std::string kOn28 = " (data: 1x28x28 synthetic images)";

// The one problem line of a config that must fail to load.
std::string only_problem(const std::string& yaml, const std::vector<std::string>& sets = {}) {
  const std::vector<std::string> lines = problems(yaml, sets);
  EXPECT_EQ(lines.size(), 1u) << ::testing::PrintToString(lines);
  return lines.empty() ? std::string() : lines.front();
}

TEST(ModelShapeCheck, ConvWithStride2AndPaddingSameIsRefusedAtItsEntry) {
  EXPECT_EQ(only_problem(kData + "model:\n"
                                 "  layers:\n"
                                 "    - conv: {filters: 8, kernel: 3, padding: same}\n"
                                 "    - conv: {filters: 8, kernel: 3, stride: 2, padding: same}\n"
                                 "    - gap\n"),
            "t.yaml:5:7: key 'model.layers.1': model layer 2 of 4 (conv): padding 'same' needs "
            "stride 1 (got stride 2); give a number for padding instead" +
                kOn28);
}

TEST(ModelShapeCheck, KernelLargerThanItsInputAfterPooling) {
  EXPECT_EQ(only_problem(kData + "model:\n"
                                 "  layers:\n"
                                 "    - conv: {filters: 8, kernel: 5}\n"
                                 "    - maxpool: 2\n"
                                 "    - maxpool: 2\n"
                                 "    - conv: {filters: 8, kernel: 7}\n"),
            "t.yaml:7:7: key 'model.layers.3': model layer 4 of 5 (conv): kernel 7x7 is larger "
            "than its input 6x6" +
                kOn28);
}

TEST(ModelShapeCheck, ResidualBlockWhoseShapesDoNotAddUp) {
  EXPECT_EQ(only_problem(kData + "model:\n"
                                 "  layers:\n"
                                 "    - conv: {filters: 8, kernel: 3, padding: same}\n"
                                 "    - residual: [{conv: {filters: 8, kernel: 3}}, batchnorm]\n"),
            "t.yaml:5:7: key 'model.layers.1': model layer 2 of 3 (residual): its layers turn "
            "8x28x28 into 8x26x26, which no 1x1 shortcut with a stride can match (the layers may "
            "keep the height and width or shrink them by a stride, not grow them)" +
                kOn28);
}

TEST(ModelShapeCheck, ALayerInsideABlockIsReportedAtItsOwnEntry) {
  EXPECT_EQ(only_problem(kData + "model:\n"
                                 "  layers:\n"
                                 "    - conv: {filters: 8, kernel: 3, padding: same}\n"
                                 "    - residual:\n"
                                 "        - conv: {filters: 8, kernel: 3, padding: same}\n"
                                 "        - conv: {filters: 8, kernel: 31}\n"),
            "t.yaml:7:11: key 'model.layers.1.residual.1': model layer 2 of 3 (residual): block "
            "layer 2 of 2 (conv): kernel 31x31 is larger than its input 28x28" +
                kOn28);
  EXPECT_EQ(only_problem(kData + "model:\n"
                                 "  layers:\n"
                                 "    - residual: {layers: [relu, {maxpool: 64}]}\n"),
            "t.yaml:4:33: key 'model.layers.0.residual.layers.1': model layer 1 of 2 (residual): "
            "block layer 2 of 2 (maxpool): window 64x64 is larger than its input 28x28" +
                kOn28);
}

TEST(ModelShapeCheck, DenseAfterTooMuchPoolingNamesThePoolThatHadNothingLeft) {
  // 28 -> 14 -> 7 -> 3 -> 1: the fifth pooling has a 1x1 input.
  EXPECT_EQ(only_problem(kData + "model:\n"
                                 "  layers:\n"
                                 "    - maxpool: 2\n"
                                 "    - maxpool: 2\n"
                                 "    - maxpool: 2\n"
                                 "    - maxpool: 2\n"
                                 "    - maxpool: 2\n"
                                 "    - dense: 10\n"),
            "t.yaml:8:7: key 'model.layers.4': model layer 5 of 6 (maxpool): window 2x2 is larger "
            "than its input 1x1" +
                kOn28);
}

TEST(ModelShapeCheck, APresetTooDeepForItsImagesIsReportedAtModelPreset) {
  EXPECT_EQ(only_problem("data: {dataset: synthetic, synthetic: {height: 12, width: 12}}\n"
                         "model: {preset: lenet}\n"),
            "t.yaml:2:17: key 'model.preset': model layer 3 of 8 (conv): kernel 5x5 is larger "
            "than its input 4x4 (data: 1x12x12 synthetic images)");
}

TEST(ModelShapeCheck, ASweptPresetIsReportedAtItsValue) {
  EXPECT_EQ(only_problem("data: {dataset: synthetic, synthetic: {height: 12, width: 12}}\n"
                         "model: {preset: mlp}\n"
                         "sweep:\n"
                         "  parameters:\n"
                         "    model.preset: {values: [mlp, lenet]}\n"),
            "t.yaml:5:34: key 'model.preset': model layer 3 of 8 (conv): kernel 5x5 is larger "
            "than its input 4x4 (data: 1x12x12 synthetic images)");
}

TEST(ModelShapeCheck, ASweptImageSizeThatPoolsAPresetToNothingIsReportedAtItsValue) {
  // convnet pools twice: 3 rows -> 1 after the first 2x2 window, nothing for the second.
  EXPECT_EQ(only_problem("data: {dataset: synthetic, synthetic: {channels: 3, height: 32, width: "
                         "32}}\n"
                         "model: {preset: convnet}\n"
                         "sweep:\n"
                         "  parameters:\n"
                         "    data.synthetic.height: {values: [32, 3]}\n"),
            "t.yaml:5:42: key 'data.synthetic.height': model layer 14 of 22 (maxpool): window 2x2 "
            "is larger than its input 1x16 (data: 3x3x32 synthetic images)");
}

TEST(ModelShapeCheck, SweptResnetDepthsAllFitA28x28Input) {
  // A stride-2 3x3 convolution with padding 1 maps even a 1x1 plane onto 1x1, so no depth of
  // preset resnet pools 28x28 away: every depth loads (and the deepest is checked in microseconds).
  const SweepConfig config =
      load_text(kData +
                "model: {preset: resnet}\n"
                "sweep:\n"
                "  parameters:\n"
                "    model.depth: {values: [8, 20, 56, 110, 1202, 18, 34]}\n");
  EXPECT_EQ(config.trial_count(), 7u);
  EXPECT_GT(trainer::check_model(expand(config)[4].config.model, trainer::Shape{1, 1, 1}, 10), 0u);
}

TEST(ModelShapeCheck, AGridValueThatBreaksTheShapeIsReportedAtItsLineInSweepParameters) {
  const std::string yaml = kData +
                           "model:\n"
                           "  layers:\n"
                           "    - conv: {filters: 8, kernel: 3}\n"
                           "    - maxpool: 2\n"
                           "sweep:\n"
                           "  parameters:\n"
                           "    model.layers.0.conv.kernel:\n"
                           "      values: [3, 5, 29]\n";
  EXPECT_EQ(only_problem(yaml),
            "t.yaml:9:22: key 'model.layers.0.conv.kernel': model layer 1 of 3 (conv): kernel "
            "29x29 is larger than its input 28x28" +
                kOn28);
  // A layer after the swept one, broken by it: still the swept value's line.
  EXPECT_EQ(only_problem(kData + "model:\n"
                                 "  layers:\n"
                                 "    - conv: {filters: 8, kernel: 3}\n"
                                 "    - conv: {filters: 8, kernel: 20}\n"
                                 "sweep:\n"
                                 "  parameters:\n"
                                 "    model.layers.0.conv.stride: {values: [1, 2]}\n"),
            "t.yaml:8:46: key 'model.layers.0.conv.stride': model layer 2 of 3 (conv): kernel "
            "20x20 is larger than its input 13x13" +
                kOn28);
}

TEST(ModelShapeCheck, ABaseProblemIsOneLineHoweverManyTrialsShareIt) {
  // The swept filters change no height or width: every trial has the base's problem, which is
  // reported once, at the layer.
  EXPECT_EQ(only_problem(kData + "model:\n"
                                 "  layers:\n"
                                 "    - conv: {filters: 8, kernel: 3}\n"
                                 "    - conv: {filters: 8, kernel: 30}\n"
                                 "sweep:\n"
                                 "  parameters:\n"
                                 "    model.layers.0.conv.filters: {values: [4, 8, 16]}\n"
                                 "    training.learning_rate: {values: [0.1, 0.01]}\n"),
            "t.yaml:5:7: key 'model.layers.1': model layer 2 of 3 (conv): kernel 30x30 is larger "
            "than its input 26x26" +
                kOn28);
}

TEST(ModelShapeCheck, DrawnValuesThatBreakTheShapeAreOneLine) {
  const std::string line = only_problem(
      kData +
      "model:\n"
      "  layers:\n"
      "    - conv: {filters: 8, kernel: 3}\n"
      "sweep:\n"
      "  method: random\n"
      "  max_trials: 40\n"
      "  parameters:\n"
      "    model.layers.0.conv.kernel: {distribution: int_uniform, min: 3, max: 60}\n");
  EXPECT_EQ(line.rfind("t.yaml:9:5: key 'model.layers.0.conv.kernel': model layer 1 of 2 (conv): "
                       "kernel ",
                       0),
            0u)
      << line;
  EXPECT_NE(line.find("is larger than its input 28x28"), std::string::npos) << line;
  EXPECT_NE(line.find("more draws like it)"), std::string::npos) << line;
}

TEST(ModelShapeCheck, ASetValueIsReportedAsTheSetArgument) {
  EXPECT_EQ(only_problem(kData + "model:\n"
                                 "  layers:\n"
                                 "    - conv: {filters: 8, kernel: 3}\n",
                         {"model.layers.0.conv.kernel=40"}),
            "--set model.layers.0.conv.kernel=40: key 'model.layers.0.conv.kernel': model layer 1 "
            "of 2 (conv): kernel 40x40 is larger than its input 28x28" +
                kOn28);
}

TEST(ModelShapeCheck, AModelThatDoesNotReadIsNotShapeChecked) {
  // A layer that does not read (an unknown argument) is reported as such; the shapes are not
  // checked against a model that is not the one written.
  EXPECT_EQ(only_problem(kData + "model:\n"
                                 "  layers:\n"
                                 "    - conv: {filters: 8, kernel: 3, strde: 2}\n"
                                 "    - maxpool: 64\n"),
            "t.yaml:4:37: key 'model.layers.0.conv.strde': unknown argument of conv (did you mean "
            "'stride'?)");
}

TEST(ModelShapeCheck, BuiltInModelsThatFitPass) {
  for (const char* model : {"{preset: lenet}", "{preset: mlp}", "{preset: convnet}",
                            "{preset: resnet, depth: 20}", "{preset: resnet, depth: 18}"}) {
    SCOPED_TRACE(model);
    EXPECT_NO_THROW(load_text(kData + "model: " + model + "\n"));  // 1x28x28, as Fashion-MNIST
    EXPECT_NO_THROW(
        load_text("data: {dataset: synthetic, synthetic: {channels: 3, height: 32, width: 32}}\n"
                  "model: " +
                  std::string(model) + "\n"));  // 3x32x32, as CIFAR-10
  }
}

TEST(ModelShapeCheck, DataShapesAreKnownWithoutTheFiles) {
  trainer::DataSpec spec;
  for (const auto dataset : {trainer::DatasetKind::fashion_mnist, trainer::DatasetKind::mnist}) {
    spec.dataset = dataset;
    const trainer::DataShape shape = trainer::data_shape(spec);
    EXPECT_EQ(shape.image, (trainer::Shape{1, 28, 28}));
    EXPECT_EQ(shape.classes, 10);
  }
  spec.dataset = trainer::DatasetKind::cifar10;
  EXPECT_EQ(trainer::data_shape(spec).image, (trainer::Shape{3, 32, 32}));
  EXPECT_EQ(trainer::data_shape(spec).classes, 10);
  spec.dataset = trainer::DatasetKind::synthetic;
  spec.synthetic.channels = 2;
  spec.synthetic.height = 7;
  spec.synthetic.width = 9;
  spec.synthetic.classes = 3;
  EXPECT_EQ(trainer::data_shape(spec).image, (trainer::Shape{2, 7, 9}));
  EXPECT_EQ(trainer::data_shape(spec).classes, 3);
}

// Every shipped config validates. One whose data is not installed is checked again with a
// data.path of empty stand-in files (the files' presence is checked, not their contents), so its
// model is still checked against its own data set's images.
TEST(ModelShapeCheck, ShippedConfigsStillValidate) {
  const std::filesystem::path stand_in = std::filesystem::temp_directory_path() /
                                         ("sweep_shape_check_data_" + std::to_string(::getpid()));
  std::filesystem::create_directories(stand_in);
  for (const char* name :
       {"train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte",
        "t10k-labels-idx1-ubyte", "data_batch_1.bin", "data_batch_2.bin", "data_batch_3.bin",
        "data_batch_4.bin", "data_batch_5.bin", "test_batch.bin"})
    std::ofstream(stand_in / name).put('\0');
  int checked = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::string(SWEEP_SOURCE_DIR) + "/configs")) {
    if (entry.path().extension() != ".yaml") continue;
    SCOPED_TRACE(entry.path().string());
    ++checked;
    try {
      load_config(entry.path().string());
    } catch (const ConfigError& e) {
      for (const std::string& line : e.messages())
        EXPECT_TRUE(line.find("data directory") != std::string::npos ||
                    line.find("missing") != std::string::npos)
            << line;
      EXPECT_NO_THROW(load_config(entry.path().string(), {"data.path=" + stand_in.string()}));
    }
  }
  std::filesystem::remove_all(stand_in);
  EXPECT_GE(checked, 7);
}

}  // namespace
}  // namespace sweep::config::testing
