/*
 * idx_reader.h — MNIST / Fashion-MNIST files (LeCun's idx format), raw or gzip.
 *
 * A directory holds train-images-idx3-ubyte, train-labels-idx1-ubyte, t10k-images-idx3-ubyte and
 * t10k-labels-idx1-ubyte, each optionally with .gz (gzip is detected by magic, not by name).
 * Every error names the file: missing, bad magic, truncated (expected N bytes, got M), image and
 * label counts that differ, a label out of range.
 */
#pragma once

#include <string>

#include "trainer/data/dataset.h"

namespace sweep::trainer {

// One images file + its labels file. `classes` bounds the labels (10 for MNIST-like sets).
Dataset read_idx_pair(const std::string& images_path, const std::string& labels_path, int classes);

// split: "train" or "t10k". Looks for the plain or .gz file names in `dir`.
Dataset read_idx_split(const std::string& dir, const std::string& split, int classes);

}  // namespace sweep::trainer
