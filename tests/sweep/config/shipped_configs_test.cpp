// Every config in configs/ validates and dry-runs as shipped (cifar-convnet with synthetic data,
// since no Debian package ships CIFAR-10), with the trial counts its comments promise.
#include <filesystem>

#include "config_test_util.h"
#include "trainer/models.h"

namespace sweep::config::testing {
namespace {

std::string shipped(const std::string& name) {
  return std::string(SWEEP_SOURCE_DIR) + "/configs/" + name;
}

TEST(ShippedConfigs, QuickstartIsASmallLenetGrid) {
  const SweepConfig config = load_config(shipped("quickstart.yaml"));
  EXPECT_EQ(config.name, "quickstart");
  EXPECT_EQ(config.trial_count(), 6u);
  EXPECT_EQ(config.shape(), "grid 3 × 2");
  EXPECT_EQ(config.base.model.preset, trainer::Preset::lenet);
  EXPECT_EQ(config.base.data.train_limit, 12000);
  EXPECT_EQ(config.base.data.test_limit, 2000);
  EXPECT_EQ(config.resources.cpu_slots, 2);
  EXPECT_EQ(config.resources.cpu_threads, 1);
  EXPECT_EQ(expand(config).size(), 6u);
}

TEST(ShippedConfigs, FashionMnistLenetIsTheFullGrid) {
  const SweepConfig config = load_config(shipped("fashion-mnist-lenet.yaml"));
  EXPECT_EQ(config.shape(), "grid 4 × 3");
  EXPECT_EQ(config.base.training.epochs, 10);
  EXPECT_EQ(config.base.training.momentum, 0.9);
  EXPECT_EQ(config.base.training.weight_decay, 5e-4);
  EXPECT_EQ(config.base.data.train_limit, 0);
  EXPECT_EQ(expand(config).size(), 12u);
}

TEST(ShippedConfigs, CifarConvnetNamesItsMissingDataOrRunsOnSynthetic) {
  if (!std::filesystem::exists("/usr/share/datasets/cifar-10")) {
    try {
      load_config(shipped("cifar-convnet.yaml"));
      ADD_FAILURE() << "cifar-convnet.yaml loaded without its data";
    } catch (const ConfigError& e) {
      ASSERT_EQ(e.messages().size(), 1u);
      EXPECT_NE(e.messages()[0].find("key 'data.path': data directory "
                                     "'/usr/share/datasets/cifar-10' does not exist"),
                std::string::npos);
    }
  }
  const SweepConfig config = load_config(shipped("cifar-convnet.yaml"), {"data.dataset=synthetic"});
  EXPECT_EQ(config.base.model.preset, trainer::Preset::convnet);
  EXPECT_EQ(config.base.model.net_width, 16);
  EXPECT_EQ(config.base.training.schedule.type, trainer::ScheduleType::piecewise);
  EXPECT_EQ(config.base.training.schedule.drop_period, 8);
  EXPECT_EQ(config.base.data.synthetic.channels, 3);
  EXPECT_EQ(config.base.data.synthetic.height, 32);
  EXPECT_EQ(expand(config).size(), config.trial_count());
}

// The ResNet configs are validated and expanded only: training ResNet-20 takes hours on CI's CPU.
TEST(ShippedConfigs, FashionMnistResnetIsResNet20) {
  const SweepConfig config = load_config(shipped("fashion-mnist-resnet.yaml"));
  EXPECT_EQ(config.trial_count(), 1u);
  const trainer::TrainConfig& c = config.base;
  EXPECT_EQ(c.model.preset, trainer::Preset::resnet);
  EXPECT_EQ(c.model.depth, 20);
  EXPECT_EQ(c.model.width, 1);
  EXPECT_EQ(c.training.batch_size, 128);
  EXPECT_EQ(c.training.learning_rate, 0.1);
  EXPECT_EQ(c.training.momentum, 0.9);
  EXPECT_EQ(c.training.weight_decay, 5e-4);
  EXPECT_EQ(c.training.schedule.type, trainer::ScheduleType::cosine);
  EXPECT_EQ(trainer::check_model(c.model, trainer::Shape{1, 28, 28}, 10), 272186u);
  EXPECT_EQ(expand(config).size(), 1u);
}

TEST(ShippedConfigs, FashionMnistResnetSweepIsDepthByLearningRate) {
  const SweepConfig config = load_config(shipped("fashion-mnist-resnet-sweep.yaml"));
  EXPECT_EQ(config.shape(), "grid 2 × 3");
  const std::vector<TrialPlan> trials = expand(config);
  ASSERT_EQ(trials.size(), 6u);
  EXPECT_EQ(trials.front().config.model.depth, 20);
  EXPECT_EQ(trials.back().config.model.depth, 32);
  EXPECT_EQ(trials.back().config.training.learning_rate, 0.2);
  // Everything but the swept keys is the single-run config's.
  trainer::TrainConfig single = load_config(shipped("fashion-mnist-resnet.yaml")).base;
  trainer::TrainConfig first = trials[1].config;  // depth 20, learning rate 0.1
  EXPECT_EQ(first.model, single.model);
  EXPECT_EQ(first.data, single.data);
  EXPECT_EQ(first.training, single.training);
}

TEST(ShippedConfigs, RandomAshaDrawsTwelveTrialsWithAsha) {
  const SweepConfig config = load_config(shipped("random-asha.yaml"));
  EXPECT_EQ(config.sweep.method, "random");
  EXPECT_EQ(config.trial_count(), 12u);
  ASSERT_TRUE(config.sweep.early_terminate.has_value());
  EXPECT_EQ(config.sweep.early_terminate->type, "asha");
  for (const TrialPlan& t : expand(config)) {
    EXPECT_GE(t.config.training.learning_rate, 0.001);
    EXPECT_LE(t.config.training.learning_rate, 0.1);
    EXPECT_GE(t.config.training.momentum, 0.8);
    EXPECT_LT(t.config.training.momentum, 0.99);
  }
}

TEST(ShippedConfigs, ExternalCommandFillsTheCommand) {
  const SweepConfig config = load_config(shipped("external-command.yaml"));
  ASSERT_TRUE(config.trainer.has_value());
  const auto trials = expand(config);
  ASSERT_EQ(trials.size(), 6u);
  EXPECT_EQ(trials[0].command,
            "python3 configs/examples/train_external.py --lr 0.01 --width 8 --epochs 3 --seed 1");
  EXPECT_TRUE(std::filesystem::exists(shipped("examples/train_external.py")));
}

TEST(ShippedConfigs, EveryYamlInConfigsIsCovered) {
  // A new config added to configs/ must validate too.
  for (const auto& entry : std::filesystem::directory_iterator(shipped(""))) {
    if (entry.path().extension() != ".yaml") continue;
    const bool cifar = entry.path().filename() == "cifar-convnet.yaml";
    EXPECT_NO_THROW(load_config(
        entry.path().string(),
        cifar ? std::vector<std::string>{"data.dataset=synthetic"} : std::vector<std::string>{}))
        << entry.path();
  }
}

}  // namespace
}  // namespace sweep::config::testing
