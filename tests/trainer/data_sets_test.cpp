/*
 * data_sets_test.cpp — synthetic data, limits, holdout, channel statistics and shuffle orders.
 *
 * Shuffle orders are checked for being permutations, for reproducibility from (seed, epoch) — the
 * property resume depends on — and for the three modes' differences.
 */
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "common/check.h"
#include "trainer/data/load_data.h"
#include "trainer/data/shuffle.h"
#include "trainer/data/synthetic.h"

namespace sweep::trainer {
namespace {

bool is_permutation_of_n(const std::vector<std::int32_t>& v, std::int64_t n) {
  std::vector<std::int32_t> s = v;
  std::sort(s.begin(), s.end());
  for (std::int64_t i = 0; i < n; ++i)
    if (s[std::size_t(i)] != i) return false;
  return std::int64_t(v.size()) == n;
}

TEST(Shuffle, EveryEpochIsAReproduciblePermutationThatChangesPerEpoch) {
  const auto e0 = epoch_order(1000, ShuffleMode::every_epoch, 7, 0);
  const auto e1 = epoch_order(1000, ShuffleMode::every_epoch, 7, 1);
  EXPECT_TRUE(is_permutation_of_n(e0, 1000));
  EXPECT_TRUE(is_permutation_of_n(e1, 1000));
  EXPECT_NE(e0, e1);
  EXPECT_EQ(e1, epoch_order(1000, ShuffleMode::every_epoch, 7, 1));
  EXPECT_NE(e0, epoch_order(1000, ShuffleMode::every_epoch, 8, 0));
}

TEST(Shuffle, OnceKeepsOneOrderAndNeverIsIdentity) {
  const auto o0 = epoch_order(100, ShuffleMode::once, 3, 0);
  EXPECT_EQ(o0, epoch_order(100, ShuffleMode::once, 3, 5));
  EXPECT_TRUE(is_permutation_of_n(o0, 100));
  const auto id = epoch_order(100, ShuffleMode::never, 3, 4);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(id[std::size_t(i)], i);
  EXPECT_FALSE(parse_word<ShuffleMode>("sometimes"));
}

TEST(Synthetic, DeterministicAndShaped) {
  SyntheticSpec s;
  s.train_size = 50;
  s.test_size = 20;
  s.channels = 3;
  s.height = 8;
  s.width = 6;
  const Dataset a = make_synthetic(s, "train");
  const Dataset b = make_synthetic(s, "train");
  const Dataset t = make_synthetic(s, "test");
  EXPECT_EQ(a.images, b.images);
  EXPECT_EQ(a.labels, b.labels);
  EXPECT_EQ(a.size(), 50);
  EXPECT_EQ(t.size(), 20);
  EXPECT_EQ(a.images.size(), 50u * 3 * 8 * 6);
  std::set<int> seen(a.labels.begin(), a.labels.end());
  EXPECT_GT(seen.size(), 5u);
  for (auto l : a.labels) EXPECT_LT(l, 10);
}

TEST(Synthetic, NearestPrototypeSeparatesTheClasses) {
  // Learnable: classifying test images by the nearest class-mean of the training images is far
  // above chance, so a network has something to find.
  SyntheticSpec s;
  s.train_size = 500;
  s.test_size = 200;
  const Dataset train = make_synthetic(s, "train");
  const Dataset test = make_synthetic(s, "test");
  const std::size_t per = 28 * 28;
  std::vector<double> means(10 * per, 0.0);
  std::vector<int> counts(10, 0);
  for (std::int64_t i = 0; i < train.size(); ++i) {
    const int l = train.labels[std::size_t(i)];
    ++counts[std::size_t(l)];
    for (std::size_t k = 0; k < per; ++k) means[l * per + k] += train.images[i * per + k];
  }
  for (int c = 0; c < 10; ++c)
    for (std::size_t k = 0; k < per; ++k) means[c * per + k] /= std::max(1, counts[std::size_t(c)]);
  int right = 0;
  for (std::int64_t i = 0; i < test.size(); ++i) {
    int best = 0;
    double best_d = 1e300;
    for (int c = 0; c < 10; ++c) {
      double d = 0;
      for (std::size_t k = 0; k < per; ++k) {
        const double diff = test.images[i * per + k] - means[c * per + k];
        d += diff * diff;
      }
      if (d < best_d) best_d = d, best = c;
    }
    right += best == test.labels[std::size_t(i)];
  }
  EXPECT_GT(right, 180);
}

TEST(LoadData, LimitsHoldoutAndStatisticsFromTheTrainingPart) {
  DataSpec spec;
  spec.dataset = sweep::trainer::DatasetKind::synthetic;
  spec.synthetic.train_size = 300;
  spec.synthetic.test_size = 100;
  spec.train_limit = 200;
  spec.test_limit = 30;
  LoadedData d = load_data(spec, 1);
  EXPECT_EQ(d.train.size(), 200);
  EXPECT_EQ(d.validation.size(), 30);
  EXPECT_EQ(d.validation_source, "test");

  spec.validation = sweep::trainer::Validation::holdout;
  spec.holdout_fraction = 0.25;
  LoadedData h = load_data(spec, 1);
  EXPECT_EQ(h.train.size(), 150);
  EXPECT_EQ(h.validation.size(), 50);
  // Holdout rows are a seeded draw: same seed same split, other seed other split.
  EXPECT_EQ(h.validation.images, load_data(spec, 1).validation.images);
  EXPECT_NE(h.validation.images, load_data(spec, 2).validation.images);
  // Statistics come from the 150 training images only.
  const ChannelStats s = channel_stats(h.train);
  EXPECT_FLOAT_EQ(h.norm.mean[0], s.mean[0]);
  EXPECT_NE(h.norm.mean[0], channel_stats(d.train).mean[0]);

  spec.validation = sweep::trainer::Validation::none;
  LoadedData n = load_data(spec, 1);
  EXPECT_TRUE(n.validation.empty());
  spec.normalize = false;
  n = load_data(spec, 1);
  EXPECT_EQ(n.norm.mean[0], 0.f);
  EXPECT_EQ(n.norm.stdev[0], 1.f);
}

TEST(LoadData, ChannelStatsByHand) {
  Dataset d;
  d.c = 2;
  d.h = 1;
  d.w = 2;
  d.classes = 2;
  d.images = {0, 255, 51, 51, 255, 255, 51, 51};  // ch0: 0,255,255,255  ch1: 51 x4
  d.labels = {0, 1};
  const ChannelStats s = channel_stats(d);
  EXPECT_NEAR(s.mean[0], 0.75, 1e-6);
  EXPECT_NEAR(s.stdev[0], std::sqrt(0.75 * 0.25), 1e-6);
  EXPECT_NEAR(s.mean[1], 0.2, 1e-6);
  EXPECT_EQ(s.stdev[1], 1.f);  // constant channel
}

}  // namespace
}  // namespace sweep::trainer
