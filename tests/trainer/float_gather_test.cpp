/*
 * float_gather_test.cpp — float features and regression targets through BatchSource and the CPU
 * backend's gather: per-feature statistics in double (two passes), each value normalised as
 * (v - mean[c]) / std[c] and augmented exactly as the plain reference (reference_ops.h) does it for
 * C up to hundreds of channels, targets gathered as floats, and statistics of the wrong scale
 * refused.
 */
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include "common/check.h"
#include "tests/trainer/gradcheck.h"
#include "tests/trainer/reference_ops.h"
#include "trainer/backend/backend.h"
#include "trainer/data/batch_source.h"

namespace sweep::trainer {
namespace {

// n samples of c x h x w float features (large offset, small spread per channel) and targets.
Dataset float_set(int n, int c, int h, int w, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> unit(-1.f, 1.f);
  Dataset d;
  d.source = "test features";
  d.c = c, d.h = h, d.w = w;
  for (int i = 0; i < n; ++i) {
    for (int ch = 0; ch < c; ++ch)
      for (int k = 0; k < h * w; ++k) d.features.push_back(1000.f * float(ch) + unit(rng));
    d.targets.push_back(unit(rng) * 10.f);
  }
  return d;
}

TEST(FloatFeatures, ChannelStatsAreEachFeaturesMeanAndStd) {
  const Dataset d = float_set(50, 3, 1, 2, 4);
  ASSERT_TRUE(d.is_float());
  ASSERT_TRUE(d.is_regression());
  const ChannelStats s = channel_stats(d);
  EXPECT_EQ(s.scale, 1.f);
  ASSERT_EQ(s.mean.size(), 3u);
  for (int ch = 0; ch < 3; ++ch) {
    double sum = 0, sq = 0;
    for (int i = 0; i < 50; ++i)
      for (int k = 0; k < 2; ++k) sum += d.features[std::size_t((i * 3 + ch) * 2 + k)];
    const double mean = sum / 100;
    for (int i = 0; i < 50; ++i)
      for (int k = 0; k < 2; ++k) {
        const double e = d.features[std::size_t((i * 3 + ch) * 2 + k)] - mean;
        sq += e * e;
      }
    EXPECT_NEAR(s.mean[std::size_t(ch)], mean, 1e-4 * std::max(1.0, std::fabs(mean)));
    EXPECT_NEAR(s.stdev[std::size_t(ch)], std::sqrt(sq / 100), 1e-5);
  }
  // A constant feature gets std 1.
  Dataset constant = d;
  for (float& v : constant.features) v = 7.f;
  EXPECT_EQ(channel_stats(constant).stdev[1], 1.f);
  EXPECT_FLOAT_EQ(channel_stats(constant).mean[1], 7.f);
}

struct FloatGatherCase {
  int c, h, w;
  bool flip;
  int shift;
};

class FloatGather : public ::testing::TestWithParam<FloatGatherCase> {};

// BatchSource's gather on the CPU (the loop's path: factors uploaded once, targets as floats)
// against the reference gather in double from the statistics.
TEST_P(FloatGather, MatchesReference) {
  const FloatGatherCase k = GetParam();
  const int rows = 40, batch = 16;
  const Dataset d = float_set(rows, k.c, k.h, k.w, 11);
  const ChannelStats stats = channel_stats(d);
  auto cpu = make_backend(DeviceSpec{DeviceKind::cpu, 0, 1});
  AugmentSpec augment;
  augment.flip = k.flip;
  augment.translate = k.shift;
  BatchSource src(*cpu, d, stats, batch, ShuffleMode::every_epoch, 5, augment, true);
  src.begin_epoch(1);
  const std::size_t sample = std::size_t(k.c) * k.h * k.w;
  std::vector<float> x(sample * batch, -1.f), y(batch, -1.f);
  const std::uint64_t step = 9;
  const int n = src.gather(1, step, true, x.data(), y.data());
  ASSERT_EQ(n, batch);

  // The same rows and draws through the reference.
  const std::vector<std::int32_t> order = epoch_order(rows, ShuffleMode::every_epoch, 5, 1);
  GatherDesc ref_desc;
  ref_desc.batch = batch;
  ref_desc.c = k.c, ref_desc.h = k.h, ref_desc.w = k.w;
  ref_desc.features = d.features.data();
  ref_desc.targets = d.targets.data();
  ref_desc.indices = order.data() + batch;
  ref_desc.flip = k.flip;
  ref_desc.max_shift = k.shift;
  ref_desc.seed = 5;
  ref_desc.step = step;
  std::vector<double> x_ref(sample * batch);
  std::vector<float> y_ref(batch);
  ref::gather_batch(ref_desc, stats.mean.data(), stats.stdev.data(), x_ref.data(), y_ref.data());
  EXPECT_TRUE(testing::all_close(x, x_ref, 1e-5, 1e-5));
  EXPECT_EQ(y, y_ref);
}

INSTANTIATE_TEST_SUITE_P(Shapes, FloatGather,
                         ::testing::Values(FloatGatherCase{500, 1, 1, false, 0},  // a CSV row
                                           FloatGatherCase{3, 5, 6, false, 0},
                                           FloatGatherCase{3, 5, 6, true, 2},
                                           FloatGatherCase{7, 4, 4, true, 1}));

TEST(FloatFeatures, StatisticsOfAnotherScaleAreRefused) {
  const Dataset d = float_set(4, 2, 1, 1, 1);
  ChannelStats pixel_stats;  // the default: taken at 1/255, for uint8 images
  auto cpu = make_backend(DeviceSpec{DeviceKind::cpu, 0, 1});
  try {
    BatchSource src(*cpu, d, pixel_stats, 4, ShuffleMode::never, 1, {}, false);
    FAIL() << "pixel statistics accepted for float features";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("test features: normalisation statistics taken at scale"),
              std::string::npos)
        << e.what();
  }
  EXPECT_NO_THROW(BatchSource(*cpu, d, identity_stats(d), 4, ShuffleMode::never, 1, {}, false));
}

// uint8 images keep the factors they always had: 1 / (255 std) and -mean / std in float.
TEST(FloatFeatures, PixelFactorsAreTheUint8Expressions) {
  Dataset d;
  d.c = 2;
  d.classes = 2;
  d.images = {0, 255, 51, 51};
  d.labels = {0, 1};
  const ChannelStats s = channel_stats(d);
  const GatherFactors f = gather_factors(d, s);
  for (int c = 0; c < 2; ++c) {
    EXPECT_EQ(f.scale[std::size_t(c)], 1.f / (255.f * s.stdev[std::size_t(c)]));
    EXPECT_EQ(f.shift[std::size_t(c)], -s.mean[std::size_t(c)] / s.stdev[std::size_t(c)]);
  }
}

}  // namespace
}  // namespace sweep::trainer
