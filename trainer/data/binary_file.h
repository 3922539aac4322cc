/*
 * binary_file.h — what the readers of outside data files share: a file opened for reading and
 * closed by its owner, and little-endian fields read off bytes.
 */
#pragma once

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

#include "common/check.h"

namespace sweep::trainer {

struct CloseFile {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using DataFile = std::unique_ptr<std::FILE, CloseFile>;

// `path` opened for reading; throws sweep::Error naming it and the system's reason.
inline DataFile open_data_file(const std::string& path) {
  DataFile f(std::fopen(path.c_str(), "rb"));
  if (!f) throw Error(path + ": cannot open: " + std::strerror(errno));
  return f;
}

// The unsigned value of `bytes` (at most 8) little-endian bytes at p.
inline std::uint64_t little_endian(const std::uint8_t* p, int bytes) {
  std::uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

}  // namespace sweep::trainer
