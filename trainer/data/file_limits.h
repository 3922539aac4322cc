/*
 * file_limits.h — the largest data a reader will allocate for, checked against what a file's
 * header claims before a byte of the data is read.
 *
 * A data file's header says how big its data is (an .npy shape, a zip entry's size); a corrupt or
 * hostile header can claim terabytes. Readers check the claim against the file's real size and
 * against this limit first, so that a 50 GB file, or a 1 KB file that claims 50 GB, is refused
 * with its size named instead of exhausting memory.
 */
#pragma once

#include <cstdint>
#include <string>

namespace sweep::trainer {

// 16 GiB, or the machine's physical memory when that is smaller (sysconf; 16 GiB when unknown).
std::uint64_t max_data_bytes();

// Throws sweep::Error naming `path` and `what` ("x_train.npy's data") when `bytes` is over
// max_data_bytes().
void check_data_size(const std::string& path, const std::string& what, std::uint64_t bytes);

// The size of the regular file at `path`; throws sweep::Error naming it when it is missing or
// not a regular file.
std::uint64_t regular_file_size(const std::string& path);

}  // namespace sweep::trainer
