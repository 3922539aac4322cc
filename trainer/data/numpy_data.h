/*
 * numpy_data.h — a `dataset: numpy` data set: one .npz, or a directory of .npy files, holding
 * x_train, y_train and (for validation: test) x_test, y_test — the names Keras' load_data() uses.
 *
 * x: uint8 becomes images; float32 becomes float features, float64 too (rounded to float32, and
 * the data set's source says so). Its shape: (N, C, H, W) or (N, H, W, C) by `layout`, (N, H, W)
 * as one channel, (N, F) as F features (C = F, H = W = 1, for an MLP). y: (N,) or (N, 1);
 * integers are class labels 0..K-1 (classes = the largest label of both splits + 1, so that the
 * two agree; a negative label or one of 256 and up is refused with its row), floats (with task:
 * regression) the targets. Every refusal names the file (an .npz as "FILE.npz:x_train.npy").
 */
#pragma once

#include <string>

#include "trainer/data/dataset.h"
#include "trainer/vocabulary.h"

namespace sweep::trainer {

struct NumpyOptions {
  Layout layout = Layout::nchw;
  Task task = Task::classification;
};

// split: "train" or "test".
Dataset read_numpy_split(const std::string& path, const std::string& split,
                         const NumpyOptions& options);

// The per-sample shape and class count read_numpy_split gives, from the x headers and the y
// arrays (class labels must be read to count them; for regression only headers are read). Checks
// what can be checked without reading x: its dtype and shape, y's rows against x's, and the test
// split's samples against the training split's; throws sweep::Error as read_numpy_split would.
struct NumpyShape {
  int c = 1, h = 1, w = 1;
  int classes = 0;
};
NumpyShape numpy_shape(const std::string& path, const NumpyOptions& options);

// The files of `path` missing for the splits asked for ("x_test.npy, y_test.npy"), "" when
// none is; throws sweep::Error for an .npz that cannot be read.
std::string numpy_missing_arrays(const std::string& path, bool need_test);

}  // namespace sweep::trainer
