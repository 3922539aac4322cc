/*
 * synthetic.h — a seeded, learnable data set for tests and benchmarks (no files needed).
 *
 * Each class has a random prototype image; a sample is its class's prototype plus uniform noise,
 * clamped to 0..255. The noise is large (half the pixel range) so that one image does not reveal
 * its class at a glance, but a small network averages it out and gets well above chance within an
 * epoch. Train and test share the prototypes and differ in noise.
 *
 * With data.task: regression the set is float features instead (C x H x W values, each uniform
 * in [-1, 1)) and one float target per sample: 2 + w . x / sqrt(values) + noise uniform in
 * [-0.05, 0.05), w a seeded vector uniform in [-1, 1). A linear model's RMSE can reach the
 * noise's, 0.029; `classes` is not used (the set has classes = 0).
 */
#pragma once

#include "trainer/data/dataset.h"
#include "trainer/train_config.h"

namespace sweep::trainer {

// split: "train" (train_size images) or "test" (test_size images).
Dataset make_synthetic(const SyntheticSpec& spec, const std::string& split);
Dataset make_synthetic_regression(const SyntheticSpec& spec, const std::string& split);

}  // namespace sweep::trainer
