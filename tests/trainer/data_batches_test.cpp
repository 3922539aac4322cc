/*
 * data_batches_test.cpp — BatchSource on the CPU backend: batch counts (partial last batch kept,
 * a single left-over image dropped in training only), the epoch order reaching gather_batch,
 * normalisation, and orders that a resumed run (a fresh BatchSource) reproduces.
 */
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "trainer/backend/backend.h"
#include "trainer/data/batch_source.h"
#include "trainer/data/shuffle.h"

namespace sweep::trainer {
namespace {

Dataset numbered(int n) {  // image i is filled with i % 256, label i % 7
  Dataset d;
  d.c = 1;
  d.h = 2;
  d.w = 3;
  d.classes = 7;
  for (int i = 0; i < n; ++i) {
    d.images.insert(d.images.end(), 6, static_cast<std::uint8_t>(i % 256));
    d.labels.push_back(static_cast<std::uint8_t>(i % 7));
  }
  return d;
}

class BatchSourceTest : public ::testing::Test {
 protected:
  void SetUp() override { backend_ = make_backend(DeviceSpec{DeviceKind::cpu, 0, 1}); }

  // The image rows (recovered from pixel values) and labels of every batch of `epoch`.
  std::pair<std::vector<int>, std::vector<int>> epoch_rows(BatchSource& src, int epoch) {
    src.begin_epoch(epoch);
    DeviceBuffer x(*backend_, std::size_t(src.batch()) * 6 * sizeof(float));
    DeviceBuffer y(*backend_, std::size_t(src.batch()) * sizeof(std::int32_t));
    std::vector<int> rows, labels;
    for (std::int64_t b = 0; b < src.batches_per_epoch(); ++b) {
      const int n = src.gather(b, 0, false, x.f(), y.as<std::int32_t>());
      std::vector<float> hx(std::size_t(n) * 6);
      std::vector<std::int32_t> hy(static_cast<std::size_t>(n));
      backend_->copy_to_host(hx.data(), x.f(), hx.size() * sizeof(float));
      backend_->copy_to_host(hy.data(), y.as<void>(), hy.size() * sizeof(std::int32_t));
      for (int i = 0; i < n; ++i) {
        rows.push_back(int(std::lround(hx[std::size_t(i) * 6] * 255.f)));  // mean 0, std 1
        labels.push_back(hy[std::size_t(i)]);
      }
    }
    return {rows, labels};
  }

  std::unique_ptr<Backend> backend_;
};

TEST_F(BatchSourceTest, PartialLastBatchKeptSingleImageDroppedOnlyInTraining) {
  const ChannelStats plain;
  BatchSource a(*backend_, numbered(100), plain, 32, ShuffleMode::never, 1, {}, true);
  EXPECT_EQ(a.batches_per_epoch(), 4);  // 32, 32, 32, 4
  EXPECT_EQ(a.batch_size_at(3), 4);
  BatchSource b(*backend_, numbered(97), plain, 32, ShuffleMode::never, 1, {}, true);
  EXPECT_EQ(b.batches_per_epoch(), 3);  // the 97th image would be a batch of one
  BatchSource e(*backend_, numbered(97), plain, 32, ShuffleMode::never, 1, {}, false);
  EXPECT_EQ(e.batches_per_epoch(), 4);  // evaluation sees every image
  BatchSource one(*backend_, numbered(1), plain, 32, ShuffleMode::never, 1, {}, true);
  EXPECT_EQ(one.batches_per_epoch(), 1);
}

TEST_F(BatchSourceTest, GatherFollowsTheEpochOrder) {
  const ChannelStats plain;
  const Dataset d = numbered(50);
  BatchSource src(*backend_, d, plain, 16, ShuffleMode::every_epoch, 9, {}, true);
  for (int epoch : {0, 1}) {
    const auto [rows, labels] = epoch_rows(src, epoch);
    const auto order = epoch_order(50, ShuffleMode::every_epoch, 9, epoch);
    ASSERT_EQ(rows.size(), 50u);
    for (std::size_t i = 0; i < 50; ++i) {
      EXPECT_EQ(rows[i], order[i]);
      EXPECT_EQ(labels[i], order[i] % 7);
    }
  }
}

TEST_F(BatchSourceTest, AFreshSourceReproducesAnyEpochsOrder) {
  const ChannelStats plain;
  for (ShuffleMode mode : {ShuffleMode::every_epoch, ShuffleMode::once, ShuffleMode::never}) {
    BatchSource run(*backend_, numbered(40), plain, 8, mode, 5, {}, true);
    epoch_rows(run, 0);
    epoch_rows(run, 1);
    const auto continued = epoch_rows(run, 2).first;
    BatchSource resumed(*backend_, numbered(40), plain, 8, mode, 5, {}, true);
    EXPECT_EQ(epoch_rows(resumed, 2).first, continued);  // resume starts at epoch 2
  }
}

TEST_F(BatchSourceTest, NormalisesWithTheGivenStatistics) {
  ChannelStats s;
  s.mean = {0.5f};
  s.stdev = {0.25f};
  BatchSource src(*backend_, numbered(4), s, 4, ShuffleMode::never, 1, {}, false);
  DeviceBuffer x(*backend_, 4 * 6 * sizeof(float)), y(*backend_, 4 * sizeof(std::int32_t));
  src.gather(0, 0, false, x.f(), y.as<std::int32_t>());
  std::vector<float> hx(24);
  backend_->copy_to_host(hx.data(), x.f(), hx.size() * sizeof(float));
  EXPECT_NEAR(hx[0], (0 / 255.0 - 0.5) / 0.25, 1e-5);
  EXPECT_NEAR(hx[18], (3 / 255.0 - 0.5) / 0.25, 1e-5);
}

}  // namespace
}  // namespace sweep::trainer
