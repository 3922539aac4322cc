/*
 * shared_upload_test.cpp — a run's data uploaded once (SharedUpload) is where a run on the same
 * device gathers from, for training and validation; a run without one, or on another device,
 * uploads its own. That training from the shared copy gives a run's own numbers is train_array's
 * tests: a fused array's members always read one (TrainArray.*BitForBit, against lone runs).
 */
#include <gtest/gtest.h>

#include <memory>

#include "tests/trainer/lenet_config.h"
#include "trainer/data/device_dataset.h"
#include "trainer/data/load_data.h"
#include "trainer/parallel/replica_set.h"

namespace sweep::trainer {
namespace {

TrainConfig small_config() {
  TrainConfig c;
  c.data.dataset = DatasetKind::synthetic;
  c.data.synthetic.train_size = 96;
  c.data.synthetic.test_size = 40;
  c.model = test::lenet_model();
  c.training.batch_size = 16;
  c.training.epochs = 1;
  c.device = DeviceSpec{DeviceKind::cpu, 0, 1};
  return c;
}

TEST(SharedUpload, ARunOnItsDeviceGathersFromIt) {
  const TrainConfig c = small_config();
  auto data = std::make_shared<LoadedData>(load_data(c.data, c.training.seed));
  data->uploaded = std::make_shared<const SharedUpload>(c.device, *data);
  ASSERT_NE(data->uploaded->validation(), nullptr);
  ReplicaSet reps({c.device}, c, *data);
  EXPECT_EQ(reps.first().train.images(), data->uploaded->train().images());
  ASSERT_TRUE(reps.first().eval.has_value());
  EXPECT_EQ(reps.first().eval->images(), data->uploaded->validation()->images());

  // Without an upload, the run has its own copy.
  LoadedData own = *data;
  own.uploaded.reset();
  ReplicaSet alone({c.device}, c, own);
  EXPECT_NE(alone.first().train.images(), nullptr);
  EXPECT_NE(alone.first().train.images(), data->uploaded->train().images());
  EXPECT_NE(alone.first().eval->images(), data->uploaded->validation()->images());
}

TEST(SharedUpload, ServesItsOwnDeviceOnly) {
  const TrainConfig c = small_config();
  const LoadedData data = load_data(c.data, c.training.seed);
  const SharedUpload up(c.device, data);
  EXPECT_TRUE(up.serves(DeviceSpec{DeviceKind::cpu, 0, 4}));  // any CPU backend reads host memory
  EXPECT_FALSE(up.serves(DeviceSpec{DeviceKind::cuda, 0, 0}));
}

}  // namespace
}  // namespace sweep::trainer
