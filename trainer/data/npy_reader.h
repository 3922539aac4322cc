/*
 * npy_reader.h — NumPy's .npy format (versions 1.0, 2.0 and 3.0), read strictly.
 *
 * A file is the magic "\x93NUMPY", a major and a minor version byte, the header's length (2 bytes
 * little-endian in 1.0, 4 bytes in 2.0 and 3.0), then the header: a Python dict literal exactly as
 * numpy writes it, e.g. {'descr': '<f4', 'fortran_order': False, 'shape': (60000, 28, 28), }
 * padded with spaces and ended by '\n'; then the data, C order. Read are the little-endian (or
 * byte-order-free) integer and float dtypes of kNpyDtypes; refused, each with the reason and the
 * file named: Fortran order, big-endian data, object (pickled) arrays, structured and every other
 * dtype. The data's size is checked against the file's size and max_data_bytes() before
 * anything is allocated.
 */
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sweep::trainer {

enum class NpyDtype { u1, i1, u2, i2, u4, i4, u8, i8, f4, f8 };

// "uint8", "float32", ... (numpy's names, for messages).
std::string_view dtype_name(NpyDtype t);
int dtype_bytes(NpyDtype t);
bool dtype_is_float(NpyDtype t);

struct NpyHeader {
  NpyDtype dtype = NpyDtype::u1;
  std::vector<std::int64_t> shape;
  std::uint64_t data_offset = 0;  // the data's first byte, from the start of the .npy
  std::uint64_t count() const;    // elements: the product of the shape
  std::uint64_t data_bytes() const { return count() * std::uint64_t(dtype_bytes(dtype)); }
  std::string shape_text() const;  // "(60000, 28, 28)"
};

// Bytes enough for any header this reader accepts (a longer header is refused).
inline constexpr std::size_t kNpyMaxHeaderBytes = 65536;

// The header at the start of `bytes` (`size` of them: the whole file or at least its header).
// `name` is the file in messages. Checks the element count's product against overflow and
// max_data_bytes(), but not against `size`.
NpyHeader parse_npy_header(const std::uint8_t* bytes, std::size_t size, const std::string& name);

// A whole array: its header and its data's bytes (little-endian, C order).
struct NpyArray {
  NpyHeader header;
  std::vector<std::uint8_t> data;
};

// An .npy held in memory (an .npz member): the header, then exactly data_bytes() of data (more
// is refused as well as less: a file numpy wrote has nothing after its data).
NpyArray parse_npy(const std::uint8_t* bytes, std::size_t size, const std::string& name);

// An .npy file: its header read first, its size checked, then only the data read.
NpyArray read_npy(const std::string& path);
// Only the header of an .npy file (the size still checked against the file's).
NpyHeader read_npy_header(const std::string& path);

// The values as float (float32 as they are, float64 rounded to the nearest float32, integers
// converted); `name` in messages: a float64 value beyond float32's range is refused.
std::vector<float> npy_floats(const NpyArray& a, const std::string& name);
// The values of an integer array as int64 (a uint64 over INT64_MAX is refused, naming its index).
std::vector<std::int64_t> npy_integers(const NpyArray& a, const std::string& name);

}  // namespace sweep::trainer
