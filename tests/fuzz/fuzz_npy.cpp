/*
 * fuzz_npy.cpp — fuzzes the .npy and .npz readers and the numpy data set built from them, on
 * arbitrary bytes.
 *
 * The input is one file, read by path: a zip ("PK" first) as an .npz — its directory, each member
 * whole and by header, then the "train" split as a data set in both layouts — anything else as an
 * .npy, its values also converted as floats and integers. sweep::Error is the expected refusal;
 * what loads must hold the data its header describes, and a data set one value per sample's
 * C x H x W and one label (below its class count) or target per sample.
 */
#include "common/check.h"
#include "fuzz_target.h"
#include "memory_file.h"
#include "trainer/data/npy_reader.h"
#include "trainer/data/npz_reader.h"
#include "trainer/data/numpy_data.h"

namespace {

using namespace sweep::trainer;

void check_array(const NpyArray& a) {
  fuzz_require(a.data.size() == a.header.data_bytes(), "an array holds its header's data bytes");
}

void check_dataset(const Dataset& d) {
  const std::size_t n = std::size_t(d.size());
  const std::size_t values = n * std::size_t(d.image_bytes());
  fuzz_require(d.c > 0 && d.h > 0 && d.w > 0, "a sample has a shape");
  fuzz_require(
      d.is_float() ? d.features.size() == values && d.images.empty() : d.images.size() == values,
      "C x H x W values per sample, images or features");
  if (d.is_regression()) {
    fuzz_require(d.classes == 0 && d.targets.size() == n, "one target per sample");
  } else {
    for (const std::uint8_t label : d.labels) fuzz_require(label < d.classes, "labels < classes");
  }
}

void read_archive(const std::string& path) {
  const ZipArchive zip(path);
  for (const ZipEntry& e : zip.entries()) {
    try {
      check_array(read_npz_array(zip, e));
    } catch (const sweep::Error&) {
    }
    try {
      read_npz_header(zip, e);
    } catch (const sweep::Error&) {
    }
  }
  for (const Layout layout : {Layout::nchw, Layout::nhwc})
    for (const Task task : {Task::classification, Task::regression}) {
      try {
        check_dataset(read_numpy_split(path, "train", {layout, task}));
      } catch (const sweep::Error&) {
      }
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > kFuzzMaxLen) return -1;
  static MemoryFile file("npy");
  file.write(data, size);
  try {
    if (size >= 2 && data[0] == 'P' && data[1] == 'K') {
      read_archive(file.path());
    } else {
      const NpyArray a = read_npy(file.path());
      check_array(a);
      try {
        fuzz_require(npy_floats(a, "a").size() == a.header.count(), "one float per element");
        fuzz_require(npy_integers(a, "a").size() == a.header.count(), "one integer per element");
      } catch (const sweep::Error&) {
      }
    }
  } catch (const sweep::Error&) {
  }
  return 0;
}
