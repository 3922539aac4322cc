/*
 * train_e2e_test.cpp — LeNet on a Fashion-MNIST subset learns, through the public train() entry
 * point, exactly as a sweep trial would call it.
 *
 * 6,000 training / 1,000 test images, 2 epochs: a few seconds on two cores, and well above chance
 * (0.1) when data, normalisation, layers, loss and optimizer all work together. Skipped with a
 * message when the data set is not installed.
 */
#include <gtest/gtest.h>

#include <filesystem>

#include "tests/trainer/lenet_config.h"
#include "trainer/train.h"

namespace sweep::trainer {
namespace {

TEST(TrainEndToEnd, LeNetLearnsFashionMnistSubset) {
  const std::string dir = "/usr/share/datasets/fashion-mnist";
  if (!std::filesystem::exists(dir + "/train-images-idx3-ubyte.gz") &&
      !std::filesystem::exists(dir + "/train-images-idx3-ubyte"))
    GTEST_SKIP() << "Fashion-MNIST is not installed at " << dir
                 << " (Debian package dataset-fashion-mnist)";
  TrainConfig c = test::fashion_mnist_lenet(dir, 64, 2);
  c.data.train_limit = 6000;
  c.data.test_limit = 1000;
  c.training.log_every = 20;
  c.device = DeviceSpec{DeviceKind::cpu, 0, 0};
  struct : TrainCallback {
    int validations = 0;
    bool on_validation(const ValidationInfo&) override { return ++validations, true; }
  } cb;
  const TrainResult r = train(c, cb);
  EXPECT_EQ(r.state, RunState::completed) << r.message;
  EXPECT_EQ(cb.validations, 2);
  EXPECT_EQ(r.iterations, 2 * 94);  // 6000 / 64 = 93 full batches + one of 48
  EXPECT_GT(r.final_val_accuracy, 0.7) << "loss " << r.final_val_loss;
  EXPECT_LT(r.final_val_loss, 0.9);
  EXPECT_GT(r.images_per_second, 0.0);
  RecordProperty("images_per_second", std::to_string(r.images_per_second));
  RecordProperty("test_accuracy", std::to_string(r.final_val_accuracy));
  std::printf(
      "LeNet on 6000 Fashion-MNIST images, 2 epochs: test accuracy %.4f, loss %.4f, %.0f images/s "
      "(%s)\n",
      r.final_val_accuracy, r.final_val_loss, r.images_per_second, r.device.c_str());
}

}  // namespace
}  // namespace sweep::trainer
