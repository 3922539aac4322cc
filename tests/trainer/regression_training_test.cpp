/*
 * regression_training_test.cpp — whole runs on a regression set (data.task: regression on the
 * synthetic set: float features, y = 2 + w . x + noise) on the CPU backend: an MLP reaches an RMSE
 * near the noise's with sgdm and with adam, the reports carry val_rmse / val_mae / val_r2 and no
 * accuracy, the model ends in one output, and a val_accuracy monitor is refused.
 */
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "common/check.h"
#include "tests/trainer/layer_spec_util.h"
#include "tests/trainer/recorder.h"
#include "tests/trainer/regression_data.h"
#include "trainer/data/data_shape.h"
#include "trainer/data/load_data.h"
#include "trainer/models.h"
#include "trainer/train.h"

namespace sweep::trainer {
namespace {

using test::layer;

TrainConfig regression_config(OptimizerKind optimizer) {
  TrainConfig c;
  c.data = test::synthetic_regression_data();
  c.data.synthetic.seed = 4;
  c.model.preset = Preset::none;
  c.model.layers = {layer("flatten"), layer("dense", {{"units", 32}}), layer("relu")};
  c.training.optimizer = optimizer;
  c.training.learning_rate = optimizer == OptimizerKind::adam ? 0.01 : 0.02;
  c.training.batch_size = 32;
  c.training.epochs = 50;
  c.training.log_every = 8;
  c.training.seed = 3;
  c.device = DeviceSpec{DeviceKind::cpu, 0, 1};
  return c;
}

TEST(RegressionData, TheSyntheticSetIsFloatFeaturesAndTargets) {
  const TrainConfig c = regression_config(OptimizerKind::sgdm);
  const LoadedData d = load_data(c.data, 1);
  EXPECT_TRUE(d.train.is_float());
  EXPECT_TRUE(d.train.is_regression());
  EXPECT_EQ(d.train.classes, 0);
  EXPECT_EQ(d.train.size(), 1024);
  EXPECT_EQ(d.validation.size(), 256);
  EXPECT_EQ(d.norm.scale, 1.f);
  EXPECT_EQ(data_shape(c.data).classes, 0);
}

class RegressionTraining : public ::testing::TestWithParam<OptimizerKind> {};

// The targets' spread is 0.33 (predicting their mean gives that RMSE); the noise's is 0.029.
TEST_P(RegressionTraining, AnMlpReachesALowRmse) {
  const TrainConfig c = regression_config(GetParam());
  test::Recorder rec;
  const TrainResult r = train(c, rec);
  ASSERT_EQ(r.state, RunState::completed) << r.message;
  EXPECT_TRUE(r.regression);
  EXPECT_EQ(r.classes, 0);
  ASSERT_FALSE(rec.validations.empty());
  EXPECT_LT(r.final_val_rmse, 0.06) << r.iterations << " iterations, first validation's RMSE "
                                    << rec.validations.front().val_rmse;
  EXPECT_GT(r.final_val_r2, 0.9);
  EXPECT_LT(r.final_val_mae, r.final_val_rmse + 1e-12);  // MAE <= RMSE always
  EXPECT_NEAR(r.final_val_rmse * r.final_val_rmse, r.final_val_loss, 1e-9);
  EXPECT_EQ(r.final_val_accuracy, 0.0);
  EXPECT_TRUE(r.confusion.empty());
  ASSERT_FALSE(rec.validations.empty());
  const ValidationInfo& last = rec.validations.back();
  EXPECT_TRUE(last.regression);
  EXPECT_EQ(last.val_accuracy, 0.0);
  EXPECT_EQ(last.train_accuracy, 0.0);
  EXPECT_GT(last.train_mae, 0.0);
  EXPECT_LE(r.final_val_rmse, last.val_rmse);  // the output network is the best epoch's
  // It learned: the first validation was worse.
  EXPECT_GT(rec.validations.front().val_rmse, last.val_rmse);
}

INSTANTIATE_TEST_SUITE_P(Optimizers, RegressionTraining,
                         ::testing::Values(OptimizerKind::sgdm, OptimizerKind::adam),
                         [](const ::testing::TestParamInfo<OptimizerKind>& p) {
                           return std::string(name_of(p.param));
                         });

TEST(RegressionTraining, AnAccuracyMonitorIsRefused) {
  TrainConfig c = regression_config(OptimizerKind::sgdm);
  c.training.epochs = 1;
  c.training.early_stopping.monitor = MonitorMetric::val_accuracy;
  c.training.early_stopping.patience = 2;
  test::Recorder rec;
  try {
    train(c, rec);
    FAIL() << "a val_accuracy monitor trained a regression";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("monitor is val_accuracy but the data is a regression"),
              std::string::npos)
        << e.what();
  }
}

// classes == 0: the model ends in one output, appended unless the list ends in a dense of one.
TEST(RegressionModel, EndsInOneOutput) {
  TrainConfig c = regression_config(OptimizerKind::sgdm);
  const std::vector<LayerSpec> appended = model_layer_specs(c.model, 0);
  ASSERT_EQ(appended.size(), c.model.layers.size() + 1);
  EXPECT_EQ(appended.back().type, LayerKind::dense);
  EXPECT_EQ(appended.back().num.at("units"), 1);
  c.model.layers.push_back(layer("dense", {{"units", 1}}));
  EXPECT_EQ(model_layer_specs(c.model, 0).size(), c.model.layers.size());
  EXPECT_EQ(check_model(c.model, Shape{8, 1, 1}, 0), std::size_t(8 * 32 + 32 + 32 + 1));
}

}  // namespace
}  // namespace sweep::trainer
