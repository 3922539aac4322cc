/*
 * fuzz_idx.cpp — fuzzes the idx (MNIST / Fashion-MNIST) reader, raw and gzip, on arbitrary bytes.
 *
 * Input: a 2-byte big-endian length L, then L bytes of images file, then the labels file (the
 * rest; L is cut to what there is). Both are read through read_idx_pair from real file paths, so
 * gzip detection and inflate are fuzzed as well. sweep::Error is the expected refusal; a Dataset
 * that loads must hold exactly N images of its shape and N labels below the class count.
 */
#include <algorithm>

#include "common/check.h"
#include "fuzz_target.h"
#include "memory_file.h"
#include "trainer/data/idx_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > kFuzzMaxLen || size < 2) return -1;
  constexpr int kClasses = 10;
  static MemoryFile images("idx-images");
  static MemoryFile labels("idx-labels");
  const std::size_t images_len =
      std::min<std::size_t>((std::size_t(data[0]) << 8) | data[1], size - 2);
  images.write(data + 2, images_len);
  labels.write(data + 2 + images_len, size - 2 - images_len);
  try {
    const sweep::trainer::Dataset d =
        sweep::trainer::read_idx_pair(images.path(), labels.path(), kClasses);
    fuzz_require(d.c == 1 && d.h > 0 && d.w > 0, "idx images have one channel and a size");
    fuzz_require(d.classes == kClasses, "the class count is the one asked for");
    fuzz_require(d.images.size() == d.labels.size() * std::size_t(d.image_bytes()),
                 "one image of h x w bytes per label");
    for (const std::uint8_t label : d.labels) fuzz_require(label < kClasses, "labels < classes");
  } catch (const sweep::Error&) {
  }
  return 0;
}
