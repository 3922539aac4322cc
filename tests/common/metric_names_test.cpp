// common/metric_names.h: the built-in trainer's series names, and an older store's name read as
// today's.
#include "common/metric_names.h"

#include <gtest/gtest.h>

#include <string_view>

namespace sweep::metric_names {
namespace {

TEST(MetricNames, ImagesPerSecondIsOneNameInSeriesAndSummary) {
  EXPECT_EQ(std::string_view(kImagesPerSecond), "images_per_second");
  EXPECT_EQ(std::string_view(kImagesPerSecond), std::string_view(summary::kImagesPerSecond));
}

TEST(MetricNames, AnOlderStoresImagesPerSecIsReadAsImagesPerSecond) {
  EXPECT_EQ(series_name("images_per_sec"), kImagesPerSecond);
  EXPECT_EQ(series_name(kImagesPerSecond), kImagesPerSecond);
  EXPECT_EQ(series_name("val_accuracy"), "val_accuracy");
}

}  // namespace
}  // namespace sweep::metric_names
