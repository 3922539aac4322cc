/*
 * fuzz_cifar.cpp — fuzzes the CIFAR-10 binary batch reader, raw and gzip, on arbitrary bytes.
 *
 * The input is one batch file, read through read_cifar10_files from a real file path; when it
 * loads, it is also read as two batches (the same file twice), which must give twice the records.
 * sweep::Error is the expected refusal; a Dataset that loads must hold one 3x32x32 image per
 * label and labels 0..9.
 */
#include "common/check.h"
#include "fuzz_target.h"
#include "memory_file.h"
#include "trainer/data/cifar_reader.h"

namespace {

void check(const sweep::trainer::Dataset& d) {
  fuzz_require(d.c == 3 && d.h == 32 && d.w == 32 && d.classes == 10, "CIFAR-10 shape");
  fuzz_require(d.images.size() == d.labels.size() * 3072, "one 3072-byte image per label");
  for (const std::uint8_t label : d.labels) fuzz_require(label < 10, "labels 0..9");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > kFuzzMaxLen) return -1;
  static MemoryFile batch("cifar-batch");
  batch.write(data, size);
  try {
    const sweep::trainer::Dataset one = sweep::trainer::read_cifar10_files({batch.path()});
    check(one);
    const sweep::trainer::Dataset two =
        sweep::trainer::read_cifar10_files({batch.path(), batch.path()});
    check(two);
    fuzz_require(two.labels.size() == 2 * one.labels.size(), "two batches hold twice the records");
  } catch (const sweep::Error&) {
  }
  return 0;
}
