/*
 * fuzz_csv.cpp — fuzzes the CSV reader on arbitrary bytes, as classification and as regression.
 *
 * The input is the file; its label column is "label". sweep::Error is the expected refusal; a
 * Dataset that loads must hold C feature values per row (C > 0, H = W = 1), and one label below
 * its class count (class names as many as the classes) or one target per row.
 */
#include "common/check.h"
#include "fuzz_target.h"
#include "memory_file.h"
#include "trainer/data/csv_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace sweep::trainer;
  if (size > kFuzzMaxLen) return -1;
  static MemoryFile file("csv");
  file.write(data, size);
  for (const Task task : {Task::classification, Task::regression}) {
    try {
      CsvOptions options;
      options.task = task;
      const Dataset d = read_csv(file.path(), options);
      const std::size_t n = std::size_t(d.size());
      fuzz_require(n > 0 && d.c > 0 && d.h == 1 && d.w == 1, "rows of C features");
      fuzz_require(d.features.size() == n * std::size_t(d.c), "C values per row");
      if (task == Task::regression) {
        fuzz_require(d.targets.size() == n && d.classes == 0, "one target per row");
      } else {
        fuzz_require(d.classes > 0 && d.classes <= kCsvMaxClasses, "1..255 classes");
        fuzz_require(d.class_names.size() == std::size_t(d.classes), "a name per class");
        for (const std::uint8_t label : d.labels)
          fuzz_require(label < d.classes, "labels < classes");
        const Dataset v = read_csv_validation(file.path(), options, file.path(), d);
        fuzz_require(v.labels == d.labels, "a file read as its own validation set is the same");
      }
    } catch (const sweep::Error&) {
    }
  }
  return 0;
}
