/*
 * file_bytes.h — read a whole data file into memory, inflating it when it is gzip.
 *
 * gzip is detected by its magic bytes (1f 8b), not by the file name, so a raw file called .gz or
 * a gzip file without the suffix both load. Errors name the file and say what is wrong.
 */
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace sweep::trainer {

// The file's bytes (decompressed when gzip). Throws sweep::Error naming the file when it is
// missing, unreadable, or a gzip stream that is truncated or corrupt.
std::vector<std::uint8_t> read_file_bytes(const std::string& path);

// `base` when it exists, else `base + ".gz"` when that exists, else "" (the caller says what was
// missing).
std::string find_plain_or_gz(const std::string& base);

}  // namespace sweep::trainer
