/*
 * npy_reader.cpp — the .npy preamble, a strict parser of the header's dict literal, the data.
 *
 * The header grammar read is the one numpy's format.py writes (and what any Python dict literal
 * of the same three keys would be): '{', then 'descr', 'fortran_order' and 'shape' in any order,
 * each once, as 'key': value pairs separated by ',' with an optional trailing ',', then '}', then
 * spaces up to a final '\n'. Strings are in single or double quotes without escapes; shape is a
 * tuple of non-negative integers ("()" for a scalar, "(n,)" for one axis; a Python 2 "L" suffix
 * is accepted). Anything else is refused with the header's offending text quoted. Data is read as
 * little-endian, which every machine the engine runs on is.
 */
#include "trainer/data/npy_reader.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <type_traits>

#include "common/check.h"
#include "trainer/data/binary_file.h"
#include "trainer/data/file_limits.h"

namespace sweep::trainer {

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr std::size_t kMagicBytes = 6;

struct DtypeWord {
  NpyDtype dtype;
  const char* code;  // descr without its byte-order character
  const char* name;
  int bytes;
};
constexpr DtypeWord kDtypes[] = {
    {NpyDtype::u1, "u1", "uint8", 1},   {NpyDtype::i1, "i1", "int8", 1},
    {NpyDtype::u2, "u2", "uint16", 2},  {NpyDtype::i2, "i2", "int16", 2},
    {NpyDtype::u4, "u4", "uint32", 4},  {NpyDtype::i4, "i4", "int32", 4},
    {NpyDtype::u8, "u8", "uint64", 8},  {NpyDtype::i8, "i8", "int64", 8},
    {NpyDtype::f4, "f4", "float32", 4}, {NpyDtype::f8, "f8", "float64", 8}};

const DtypeWord& word(NpyDtype t) {
  for (const DtypeWord& w : kDtypes)
    if (w.dtype == t) return w;
  return kDtypes[0];
}

std::string supported_list() {
  std::string text;
  for (const DtypeWord& w : kDtypes) text += std::string(text.empty() ? "" : ", ") + w.name;
  return text;
}

// The header dict, parsed left to right; every refusal quotes where it stopped.
class HeaderParser {
 public:
  HeaderParser(std::string_view text, const std::string& name) : text_(text), name_(name) {}

  NpyHeader parse() {
    NpyHeader h;
    bool have_descr = false, have_order = false, have_shape = false;
    spaces();
    expect('{');
    while (true) {
      spaces();
      if (peek() == '}') break;
      const std::string key = string_literal("a key");
      spaces();
      expect(':');
      spaces();
      if (key == "descr") {
        once(have_descr, key);
        h.dtype = descr();
      } else if (key == "fortran_order") {
        once(have_order, key);
        if (identifier() != "False")
          fail(
              "Fortran-order (column-major) arrays are not read: save a C-order array "
              "(np.ascontiguousarray)");
      } else if (key == "shape") {
        once(have_shape, key);
        h.shape = shape();
      } else {
        fail("unknown key '" + key +
             "' in the header (an .npy header has descr, fortran_order "
             "and shape)");
      }
      spaces();
      if (peek() == ',') {
        ++at_;
        continue;
      }
      if (peek() != '}') fail("expected ',' or '}' in the header");
    }
    ++at_;
    while (at_ + 1 < text_.size() && text_[at_] == ' ') ++at_;
    if (at_ + 1 != text_.size() || text_[at_] != '\n')
      fail("the header does not end in spaces and a newline after its '}'");
    if (!have_descr || !have_order || !have_shape)
      fail(std::string("the header has no '") +
           (!have_descr   ? "descr"
            : !have_order ? "fortran_order"
                          : "shape") +
           "'");
    return h;
  }

 private:
  [[noreturn]] void fail(const std::string& why) const {
    std::string near(text_.substr(at_ < text_.size() ? at_ : text_.size(), 24));
    for (char& c : near)
      if (c < 0x20 || c > 0x7e) c = '?';
    throw Error(name_ + ": not a valid .npy header: " + why + " (at byte " + std::to_string(at_) +
                " of the header: \"" + near + "\")");
  }
  char peek() const { return at_ < text_.size() ? text_[at_] : '\0'; }
  void spaces() {
    while (peek() == ' ') ++at_;
  }
  void expect(char c) {
    if (peek() != c) fail(std::string("expected '") + c + "'");
    ++at_;
  }
  void once(bool& seen, const std::string& key) {
    if (seen) fail("'" + key + "' appears twice");
    seen = true;
  }
  std::string string_literal(const char* what) {
    const char quote = peek();
    if (quote != '\'' && quote != '"') fail(std::string("expected ") + what + " in quotes");
    const std::size_t start = ++at_;
    while (at_ < text_.size() && text_[at_] != quote) {
      if (text_[at_] == '\\' || text_[at_] == '\n') fail("unexpected character in a string");
      ++at_;
    }
    if (at_ >= text_.size()) fail("a string without its closing quote");
    return std::string(text_.substr(start, at_++ - start));
  }
  std::string identifier() {
    const std::size_t start = at_;
    while ((peek() >= 'a' && peek() <= 'z') || (peek() >= 'A' && peek() <= 'Z')) ++at_;
    const std::string id(text_.substr(start, at_ - start));
    if (id != "True" && id != "False") {
      at_ = start;
      fail("fortran_order must be True or False");
    }
    return id;
  }
  NpyDtype descr() {
    if (peek() == '[')
      fail("structured (record) dtypes are not read: save one plain array per name");
    const std::size_t start = at_;
    const std::string d = string_literal("the dtype");
    if (d == "O" || d == "|O" || d == "<O" || d == ">O")
      throw Error(name_ +
                  ": an object array (pickled Python objects) is not read: save a "
                  "numeric array (" +
                  supported_list() + ")");
    const char order = d.empty() ? '\0' : d[0];
    const bool has_order = order == '<' || order == '>' || order == '|' || order == '=';
    const std::string code = has_order ? d.substr(1) : d;
    for (const DtypeWord& w : kDtypes) {
      if (code != w.code) continue;
      if (order == '>' && w.bytes > 1)
        throw Error(name_ + ": dtype '" + d + "' (" + w.name +
                    ") is big-endian, which is not "
                    "read: save it as '<" +
                    code + "' (a.astype('<" + code + "'))");
      return w.dtype;
    }
    at_ = start;
    throw Error(name_ + ": dtype '" + d + "' is not read (read are " + supported_list() + ")");
  }
  std::vector<std::int64_t> shape() {
    expect('(');
    std::vector<std::int64_t> dims;
    bool trailing_comma = false;
    while (true) {
      spaces();
      if (peek() == ')') break;
      if (peek() < '0' || peek() > '9') fail("expected a size in the shape");
      std::int64_t v = 0;
      while (peek() >= '0' && peek() <= '9') {
        if (v > (std::numeric_limits<std::int64_t>::max() - 9) / 10) fail("a size too large");
        v = v * 10 + (peek() - '0');
        ++at_;
      }
      if (peek() == 'L') ++at_;
      dims.push_back(v);
      if (dims.size() > 32) fail("more than 32 axes");
      spaces();
      trailing_comma = peek() == ',';
      if (trailing_comma) {
        ++at_;
        continue;
      }
      if (peek() != ')') fail("expected ',' or ')' in the shape");
    }
    if (dims.size() == 1 && !trailing_comma) fail("a one-axis shape is written (n,)");
    ++at_;
    return dims;
  }

  std::string_view text_;
  const std::string& name_;
  std::size_t at_ = 0;
};

// The preamble's length (10 or 12 bytes) and the header's, from the first bytes of the file.
std::pair<std::size_t, std::size_t> preamble(const std::uint8_t* bytes, std::size_t size,
                                             const std::string& name) {
  if (size < kMagicBytes || std::memcmp(bytes, kMagic, kMagicBytes) != 0)
    throw Error(name + ": not an .npy file (it does not start with \\x93NUMPY)");
  if (size < 10) throw Error(name + ": truncated (" + std::to_string(size) + " bytes of .npy)");
  const int major = bytes[6], minor = bytes[7];
  if ((major != 1 && major != 2 && major != 3) || minor != 0)
    throw Error(name + ": .npy format version " + std::to_string(major) + "." +
                std::to_string(minor) + " is not read (1.0, 2.0 and 3.0 are)");
  const std::size_t lead = major == 1 ? 10 : 12;
  if (size < lead) throw Error(name + ": truncated (" + std::to_string(size) + " bytes of .npy)");
  const std::uint64_t header = little_endian(bytes + 8, major == 1 ? 2 : 4);
  if (header > kNpyMaxHeaderBytes)
    throw Error(name + ": its .npy header claims " + std::to_string(header) +
                " bytes, more than the " + std::to_string(kNpyMaxHeaderBytes) + " read");
  return {lead, std::size_t(header)};
}

void check_data_fits(const NpyHeader& h, std::uint64_t file_size, const std::string& name) {
  const std::uint64_t have = file_size - h.data_offset;
  if (have < h.data_bytes())
    throw Error(name + ": truncated (shape " + h.shape_text() + " of " +
                std::string(dtype_name(h.dtype)) + " needs " + std::to_string(h.data_bytes()) +
                " bytes of data, the file has " + std::to_string(have) + ")");
  if (have > h.data_bytes())
    throw Error(name + ": " + std::to_string(have - h.data_bytes()) +
                " bytes follow the data that its header (shape " + h.shape_text() + " of " +
                std::string(dtype_name(h.dtype)) + ") describes");
}

void read_exactly(std::FILE* f, void* into, std::size_t n, const std::string& path) {
  if (n > 0 && std::fread(into, 1, n, f) != n)
    throw Error(path + ": cannot read " + std::to_string(n) + " bytes" +
                (std::ferror(f) ? std::string(": ") + std::strerror(errno) : std::string()));
}

// Opens `path` and reads its header; `f` is left at the data.
NpyHeader open_and_read_header(const std::string& path, DataFile& f, std::uint64_t& file_size) {
  file_size = regular_file_size(path);
  f = open_data_file(path);
  std::vector<std::uint8_t> head(std::size_t(std::min<std::uint64_t>(file_size, 12)));
  read_exactly(f.get(), head.data(), head.size(), path);
  const auto [lead, header] = preamble(head.data(), head.size(), path);
  if (file_size < lead + header)
    throw Error(path + ": truncated (its header claims " + std::to_string(header) +
                " bytes, the file has " + std::to_string(file_size - lead) +
                " after the preamble)");
  head.resize(lead + header);
  if (std::fseek(f.get(), long(lead), SEEK_SET) != 0)
    throw Error(path + ": cannot seek: " + std::strerror(errno));
  read_exactly(f.get(), head.data() + lead, header, path);
  NpyHeader h = parse_npy_header(head.data(), head.size(), path);
  check_data_fits(h, file_size, path);
  return h;
}

template <class T>
T load(const std::uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

}  // namespace

std::string_view dtype_name(NpyDtype t) { return word(t).name; }
int dtype_bytes(NpyDtype t) { return word(t).bytes; }
bool dtype_is_float(NpyDtype t) { return t == NpyDtype::f4 || t == NpyDtype::f8; }

std::uint64_t NpyHeader::count() const {
  std::uint64_t n = 1;
  for (const std::int64_t d : shape) n *= std::uint64_t(d);
  return n;
}

std::string NpyHeader::shape_text() const {
  std::string text = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + (shape.size() == 1 ? ",)" : ")");
}

NpyHeader parse_npy_header(const std::uint8_t* bytes, std::size_t size, const std::string& name) {
  const auto [lead, header] = preamble(bytes, size, name);
  if (size < lead + header)
    throw Error(name + ": truncated (its header claims " + std::to_string(header) +
                " bytes, there are " + std::to_string(size - lead) + ")");
  NpyHeader h =
      HeaderParser(std::string_view(reinterpret_cast<const char*>(bytes) + lead, header), name)
          .parse();
  h.data_offset = lead + header;
  // The product is checked as it grows: a shape whose product wraps past 2^64 would otherwise
  // pass every size check. An axis of 0 makes the array empty whatever the others say.
  std::uint64_t bytes_needed = std::uint64_t(dtype_bytes(h.dtype));
  bool wrapped = false;
  for (const std::int64_t d : h.shape)
    wrapped = __builtin_mul_overflow(bytes_needed, std::uint64_t(d), &bytes_needed) || wrapped;
  for (const std::int64_t d : h.shape)
    if (d == 0) return h;
  if (wrapped)
    throw Error(name + ": shape " + h.shape_text() + " of " + std::string(dtype_name(h.dtype)) +
                " claims more than 2^64 bytes");
  check_data_size(name,
                  "the data its header claims (shape " + h.shape_text() + " of " +
                      std::string(dtype_name(h.dtype)) + ")",
                  bytes_needed);
  return h;
}

NpyArray parse_npy(const std::uint8_t* bytes, std::size_t size, const std::string& name) {
  NpyArray a;
  a.header = parse_npy_header(bytes, size, name);
  check_data_fits(a.header, size, name);
  a.data.assign(bytes + a.header.data_offset, bytes + size);
  return a;
}

NpyHeader read_npy_header(const std::string& path) {
  DataFile f;
  std::uint64_t size = 0;
  return open_and_read_header(path, f, size);
}

NpyArray read_npy(const std::string& path) {
  DataFile f;
  std::uint64_t size = 0;
  NpyArray a;
  a.header = open_and_read_header(path, f, size);
  a.data.resize(std::size_t(a.header.data_bytes()));
  read_exactly(f.get(), a.data.data(), a.data.size(), path);
  return a;
}

namespace {

// Calls f(i, value) for each element, read as its dtype's C++ type.
template <class F>
void each_value(const NpyArray& a, F f) {
  const std::size_t n = std::size_t(a.header.count());
  const std::uint8_t* p = a.data.data();
  const auto run = [&](auto zero) {
    using T = decltype(zero);
    for (std::size_t i = 0; i < n; ++i) f(i, load<T>(p + i * sizeof(T)));
  };
  switch (a.header.dtype) {
    case NpyDtype::u1:
      return run(std::uint8_t{});
    case NpyDtype::i1:
      return run(std::int8_t{});
    case NpyDtype::u2:
      return run(std::uint16_t{});
    case NpyDtype::i2:
      return run(std::int16_t{});
    case NpyDtype::u4:
      return run(std::uint32_t{});
    case NpyDtype::i4:
      return run(std::int32_t{});
    case NpyDtype::u8:
      return run(std::uint64_t{});
    case NpyDtype::i8:
      return run(std::int64_t{});
    case NpyDtype::f4:
      return run(float{});
    case NpyDtype::f8:
      return run(double{});
  }
}

}  // namespace

std::vector<float> npy_floats(const NpyArray& a, const std::string& name) {
  std::vector<float> out(std::size_t(a.header.count()));
  each_value(a, [&](std::size_t i, auto value) {
    const double v = double(value);
    if (!std::isfinite(v) || std::fabs(v) > double(std::numeric_limits<float>::max()))
      throw Error(name + ": element " + std::to_string(i) + " is " + std::to_string(v) +
                  (std::isfinite(v) ? ", beyond float32's range" : ": only finite values train"));
    out[i] = float(v);
  });
  return out;
}

std::vector<std::int64_t> npy_integers(const NpyArray& a, const std::string& name) {
  if (dtype_is_float(a.header.dtype))
    throw Error(name + ": dtype " + std::string(dtype_name(a.header.dtype)) +
                " where integers were expected");
  std::vector<std::int64_t> out(std::size_t(a.header.count()));
  each_value(a, [&](std::size_t i, auto value) {
    if constexpr (std::is_integral_v<decltype(value)>) {
      if constexpr (std::is_same_v<decltype(value), std::uint64_t>)
        if (value > std::uint64_t(std::numeric_limits<std::int64_t>::max()))
          throw Error(name + ": element " + std::to_string(i) + " is " + std::to_string(value) +
                      ", too large for a label");
      out[i] = std::int64_t(value);
    }
  });
  return out;
}

}  // namespace sweep::trainer
