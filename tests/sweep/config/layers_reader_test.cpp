// Residual blocks and preset resnet in a config: a block read into nested LayerSpecs (the map form
// and the list shorthand alike), problems inside a block reported at their own line and column in
// line order, and model.depth / model.width swept in a grid giving networks of different sizes.
#include "config_test_util.h"
#include "trainer/models.h"

namespace sweep::config::testing {
namespace {

using trainer::LayerKind;

const std::string kData =
    "data: {dataset: synthetic, synthetic: {train_size: 64, test_size: 32}}\n";

TEST(ResidualConfig, ABlockReadsAsNestedLayers) {
  const SweepConfig config = load_text(
      kData +
      "model:\n"
      "  layers:\n"
      "    - conv: {filters: 16, kernel: 3, padding: same}\n"
      "    - batchnorm\n"
      "    - relu\n"
      "    - residual: {layers: [{conv: {filters: 32, kernel: 3, stride: 2, padding: 1}}, "
      "batchnorm, relu, {conv: {filters: 32, kernel: 3, padding: same}}, batchnorm], "
      "activation: relu}\n"
      "    - residual:\n"
      "        - conv: {filters: 32, kernel: 3, padding: same}\n"
      "        - batchnorm\n"
      "    - residual: {layers: [relu], activation: none}\n"
      "    - gap\n");
  const auto& layers = config.base.model.layers;
  ASSERT_EQ(layers.size(), 7u);
  const trainer::LayerSpec& down = layers[3];
  EXPECT_EQ(down.type, LayerKind::residual);
  EXPECT_EQ(down.str.at("activation"), "relu");
  ASSERT_EQ(down.layers.size(), 5u);
  EXPECT_EQ(down.layers[0].type, LayerKind::conv);
  EXPECT_EQ(down.layers[0].num.at("stride"), 2.0);
  EXPECT_EQ(down.layers[0].num.at("padding"), 1.0);
  EXPECT_EQ(down.layers[3].str.at("padding"), "same");
  EXPECT_EQ(down.layers[4].type, LayerKind::batchnorm);
  const trainer::LayerSpec& shorthand = layers[4];
  EXPECT_EQ(shorthand.type, LayerKind::residual);
  EXPECT_TRUE(shorthand.str.empty());  // activation: the table's default, relu
  ASSERT_EQ(shorthand.layers.size(), 2u);
  EXPECT_EQ(shorthand.layers[1].type, LayerKind::batchnorm);
  EXPECT_EQ(layers[5].str.at("activation"), "none");

  // stem 1->16, block 16->32 (two conv-bn pairs + the 1x1 projection and its bn), block 32->32,
  // the parameter-free block, gap, dense 32->10.
  const std::size_t stem = 16 * 9 + 16 + 2 * 16;
  const std::size_t down_params =
      16 * 32 * 9 + 32 + 2 * 32 + 32 * 32 * 9 + 32 + 2 * 32 + 16 * 32 + 2 * 32;
  const std::size_t same_params = 32 * 32 * 9 + 32 + 2 * 32;
  EXPECT_EQ(trainer::check_model(config.base.model, trainer::Shape{1, 28, 28}, 10),
            stem + down_params + same_params + 32 * 10 + 10);
}

TEST(ResidualConfig, ProblemsInsideBlocksAreReportedAtTheirPlaceInLineOrder) {
  const std::vector<std::string> lines =
      problems(kData +
               "model:\n"
               "  layers:\n"
               "    - residual:\n"
               "        layers:\n"
               "          - conv: {filters: 8, kernel: 3, paddng: same}\n"
               "          - residual: [rleu]\n"
               "        activation: sigmoid\n"
               "    - residual: {layers: []}\n"
               "    - residual\n");
  ASSERT_EQ(lines.size(), 5u) << ::testing::PrintToString(lines);
  EXPECT_EQ(lines[0],
            "t.yaml:6:43: key 'model.layers.0.residual.layers.0.conv.paddng': unknown argument of "
            "conv (did you mean 'padding'?)");
  EXPECT_EQ(lines[1],
            "t.yaml:7:24: key 'model.layers.0.residual.layers.1.residual.0': unknown layer type "
            "'rleu' (did you mean 'relu'?)");
  EXPECT_EQ(lines[2],
            "t.yaml:8:21: key 'model.layers.0.residual.activation': unknown activation 'sigmoid' "
            "(one of: relu, none)");
  EXPECT_EQ(lines[3],
            "t.yaml:9:26: key 'model.layers.1.residual.layers': the list of layers is "
            "empty");
  EXPECT_EQ(lines[4], "t.yaml:10:7: key 'model.layers.2.residual': 'residual' needs 'layers'");
}

TEST(ResidualConfig, DepthAndWidthSweptInAGridGiveNetworksOfDifferentSizes) {
  const SweepConfig config = load_text(
      "data: {dataset: synthetic, synthetic: {channels: 3, height: 32, width: 32}}\n"
      "model: {preset: resnet}\n"
      "training: {epochs: 1}\n"
      "sweep:\n"
      "  parameters:\n"
      "    model.depth: {values: [20, 32]}\n"
      "    model.width: {values: [1, 2]}\n");
  EXPECT_EQ(config.base.model.depth, 20);
  EXPECT_EQ(config.base.model.width, 1);
  const std::vector<TrialPlan> trials = expand(config);
  ASSERT_EQ(trials.size(), 4u);
  std::vector<std::size_t> counts;
  for (const TrialPlan& t : trials) {
    EXPECT_EQ(t.config.model.preset, trainer::Preset::resnet);
    counts.push_back(trainer::check_model(t.config.model, trainer::Shape{3, 32, 32}, 10));
  }
  // Grid order: the first parameter varies slowest. ResNet-20 and -32 with 1x1 projections.
  EXPECT_EQ(trials[0].config.model.depth, 20);
  EXPECT_EQ(trials[0].config.model.width, 1);
  EXPECT_EQ(counts[0], 272474u);
  EXPECT_EQ(trials[2].config.model.depth, 32);
  EXPECT_EQ(trials[2].config.model.width, 1);
  EXPECT_EQ(counts[2], 466906u);
  EXPECT_GT(counts[1], 3 * counts[0]);  // width 2: about four times the weights
  EXPECT_GT(counts[3], counts[1]);
  EXPECT_NE(trials[1].resolved_yaml.find("width: 2"), std::string::npos) << trials[1].resolved_yaml;
}

}  // namespace
}  // namespace sweep::config::testing
