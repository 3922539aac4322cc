/*
 * fuzz_model_file.cpp — fuzzes the model file reader (read_model_file), the check of its layers
 * against its arrays (check_model_network) and the exporters' walk over a file that passes it
 * (exported_layers).
 *
 * Input: one flag byte, then the file, its CRC-32 made right when the flag's low bit is set
 * (crc_flag_input.h). sweep::Error is the expected refusal; a file that reads must hold no more
 * floats than its bytes, one statistic per channel and a positive scale, and a file whose layers
 * pass the check must be walked by the exporters without an error, taking exactly its arrays.
 */
#include <vector>

#include "common/check.h"
#include "crc_flag_input.h"
#include "fuzz_target.h"
#include "memory_file.h"
#include "trainer/export/exported_layers.h"
#include "trainer/model_file.h"
#include "trainer/model_rebuild.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > kFuzzMaxLen || size < 1) return -1;
  static MemoryFile file("model_file");
  const std::vector<std::uint8_t> bytes = file_of_crc_flag_input(data, size);
  file.write(bytes.data(), bytes.size());
  sweep::trainer::ModelFile m;
  try {
    m = sweep::trainer::read_model_file(file.path());
  } catch (const sweep::Error&) {
    return 0;
  }
  fuzz_require((m.params.size() + m.state.size()) * sizeof(float) < bytes.size(),
               "the arrays' floats are the file's");
  fuzz_require(m.input.mean.size() == std::size_t(m.input.c) &&
                   m.input.stdev.size() == std::size_t(m.input.c),
               "one statistic per channel");
  fuzz_require(m.input.scale > 0, "a positive scale");
  try {
    sweep::trainer::check_model_network(m, file.path());
  } catch (const sweep::Error&) {
    return 0;
  }
  std::size_t floats = 0;
  try {
    const auto layers = sweep::trainer::exported_layers(m, file.path());
    for (const auto* t : sweep::trainer::all_tensors(layers)) floats += t->values.size();
  } catch (const sweep::Error&) {
    fuzz_require(false, "a model whose layers pass the check is walked by the exporters");
  }
  fuzz_require(floats == m.params.size() + m.state.size(), "the walk takes exactly the arrays");
  return 0;
}
