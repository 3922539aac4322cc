/*
 * crc_flag_input.h — the input of the harnesses whose files end in a CRC-32 (fuzz_checkpoint,
 * fuzz_model_file): one flag byte, then the file. With the flag's low bit set, the CRC-32 of the
 * file's bytes before its last four is written into those four, so that the fuzzer reaches the
 * parsing behind the checksum (a random change would almost never survive it).
 */
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "trainer/crc32.h"

// The file an input of `size` >= 1 bytes stands for.
inline std::vector<std::uint8_t> file_of_crc_flag_input(const std::uint8_t* data,
                                                        std::size_t size) {
  std::vector<std::uint8_t> bytes(data + 1, data + size);
  if ((data[0] & 1) != 0 && bytes.size() >= 4) {
    const std::uint32_t crc = sweep::trainer::crc32_of(bytes.data(), bytes.size() - 4);
    std::memcpy(bytes.data() + bytes.size() - 4, &crc, 4);
  }
  return bytes;
}
