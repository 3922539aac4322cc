/*
 * data_shape.h — what a data set's images look like and how many classes it has, known from its
 * DataSpec without loading it (no file is read, except for a folder data set: its class folders are
 * listed and, unless data.channels and data.image_size say it all, its first image's header is
 * read; for a numpy data set x_train's header and the y arrays are read, for a CSV data set the
 * whole file, whose distinct labels are its classes), so a config can be checked against the
 * model before anything runs.
 *
 * MNIST and Fashion-MNIST are 28x28 grey images of 10 classes by definition; the idx reader takes
 * the size from the file's header (any size reads), so a data.path holding other idx files trains
 * at their size while this still says 28x28. CIFAR-10's shape is its reader's (cifar_reader.h);
 * synthetic data is what its spec says.
 */
#pragma once

#include "trainer/shape.h"
#include "trainer/train_config.h"

namespace sweep::trainer {

// What every MNIST and Fashion-MNIST image is: 1 x 28 x 28, one of 10 classes.
inline constexpr int kMnistSide = 28;
inline constexpr int kMnistClasses = 10;

struct DataShape {
  Shape image;      // per sample, as the model's input
  int classes = 0;  // 0: a regression set (one output)
};

// The shape of `spec`'s images and its class count, without loading the data set. A folder that
// cannot be read gives 0 x 0 x 0 and 0 classes: unknown (the data-path check says why).
DataShape data_shape(const DataSpec& spec);

}  // namespace sweep::trainer
