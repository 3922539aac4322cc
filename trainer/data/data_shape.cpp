/*
 * data_shape.cpp — each data set's image shape and classes, from the readers' own constants.
 */
#include "trainer/data/data_shape.h"

#include "trainer/data/cifar_reader.h"

namespace sweep::trainer {

DataShape data_shape(const DataSpec& spec) {
  switch (spec.dataset) {
    case DatasetKind::cifar10:
      return {Shape{kCifar10Channels, kCifar10Side, kCifar10Side}, kCifar10Classes};
    case DatasetKind::synthetic: {
      const SyntheticSpec& s = spec.synthetic;
      return {Shape{s.channels, s.height, s.width}, s.classes};
    }
    case DatasetKind::fashion_mnist:
    case DatasetKind::mnist:
      break;
  }
  return {Shape{1, kMnistSide, kMnistSide}, kMnistClasses};
}

}  // namespace sweep::trainer
