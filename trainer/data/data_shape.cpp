/*
 * data_shape.cpp — each data set's image shape and classes, from the readers' own constants (and
 * for a folder data set from its class folders and first image, for a numpy one from x_train's
 * header and the labels, for a CSV one from the whole file).
 */
#include "trainer/data/data_shape.h"

#include "common/check.h"
#include "trainer/data/cifar_reader.h"
#include "trainer/data/csv_reader.h"
#include "trainer/data/folder_reader.h"
#include "trainer/data/image_decode.h"
#include "trainer/data/numpy_data.h"

namespace sweep::trainer {

namespace {

// A folder's classes are its class folders; its image shape is data.channels and
// data.image_size where given, else the first image's own (read from its header alone; with
// channels unset, a later colour file makes the set colour while this says grey). Unknown
// (0 x 0 x 0, 0 classes) when the folder cannot be read: the config check says why.
DataShape folder_shape(const DataSpec& spec) {
  const DataShape kUnknown{Shape{0, 0, 0}, 0};
  const FolderSpec& f = spec.folder;
  try {
    const std::vector<std::string> classes = list_class_folders(spec.path, "data.path");
    Shape image{f.channels, f.height, f.width};
    if (f.channels == 0 || f.height == 0) {
      const std::string first = first_image_file(spec.path, classes.front());
      if (first.empty()) return kUnknown;
      const ImageHeader header = read_image_header(read_image_file(first), first);
      if (image.c == 0) image.c = header.c;
      if (image.h == 0) image = Shape{image.c, header.h, header.w};
    }
    return {image, int(classes.size())};
  } catch (const Error&) {
    return kUnknown;
  }
}

// A numpy data set's sample shape is x_train's header's; its classes need y read (both splits'
// labels counted, as the reader counts them). A CSV data set is read whole: its classes are its
// label column's distinct values. Unknown, as a folder's, when the files cannot be read.
DataShape numpy_data_shape(const DataSpec& spec) {
  try {
    const NumpyShape s = numpy_shape(spec.path, {spec.layout, spec.task});
    return {Shape{s.c, s.h, s.w}, s.classes};
  } catch (const Error&) {
    return {Shape{0, 0, 0}, 0};
  }
}

DataShape csv_data_shape(const DataSpec& spec) {
  try {
    const Dataset d = read_csv(spec.path, {spec.label, spec.feature_columns, spec.task});
    return {Shape{d.c, 1, 1}, d.classes};
  } catch (const Error&) {
    return {Shape{0, 0, 0}, 0};
  }
}

}  // namespace

DataShape data_shape(const DataSpec& spec) {
  switch (spec.dataset) {
    case DatasetKind::cifar10:
      return {Shape{kCifar10Channels, kCifar10Side, kCifar10Side}, kCifar10Classes};
    case DatasetKind::synthetic: {
      const SyntheticSpec& s = spec.synthetic;
      return {Shape{s.channels, s.height, s.width}, spec.task == Task::regression ? 0 : s.classes};
    }
    case DatasetKind::folder:
      return folder_shape(spec);
    case DatasetKind::numpy:
      return numpy_data_shape(spec);
    case DatasetKind::csv:
      return csv_data_shape(spec);
    case DatasetKind::fashion_mnist:
    case DatasetKind::mnist:
      break;
  }
  return {Shape{1, kMnistSide, kMnistSide}, kMnistClasses};
}

}  // namespace sweep::trainer
