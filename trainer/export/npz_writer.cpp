/*
 * npz_writer.cpp — .npy v1.0 headers and a stored zip around them.
 */
#include "trainer/export/npz_writer.h"

#include <zlib.h>

#include <set>

#include "common/check.h"
#include "trainer/crc32.h"

namespace sweep::trainer {

namespace {

void put16(std::string& s, std::uint32_t v) {
  s += char(v & 0xff);
  s += char((v >> 8) & 0xff);
}
void put32(std::string& s, std::uint32_t v) {
  put16(s, v & 0xffff);
  put16(s, v >> 16);
}

// One .npy file: magic, version 1.0, the header dict padded with spaces to a multiple of 64
// bytes (newline last), then the values.
std::string npy(const ExportTensor& t) {
  std::string shape = "(";
  for (std::size_t i = 0; i < t.dims.size(); ++i)
    shape += std::to_string(t.dims[i]) + (t.dims.size() == 1      ? ","
                                          : i + 1 < t.dims.size() ? ", "
                                                                  : "");
  shape += ")";
  std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + ", }";
  const std::size_t unpadded = 10 + dict.size() + 1;
  dict.append((64 - unpadded % 64) % 64, ' ');
  dict += '\n';
  std::string out = "\x93NUMPY";
  out += char(1);
  out += char(0);
  put16(out, std::uint32_t(dict.size()));
  out += dict;
  out.append(reinterpret_cast<const char*>(t.values.data()), t.values.size() * sizeof(float));
  return out;
}

constexpr std::uint32_t kDosDate = (0 << 9) | (1 << 5) | 1;  // 1980-01-01, zip's first day

}  // namespace

std::string npz_bytes(const std::vector<const ExportTensor*>& arrays) {
  std::string zip, central;
  std::set<std::string> names;
  for (const ExportTensor* t : arrays) {
    if (t->name.empty() || !names.insert(t->name).second)
      throw Error("npz: array name '" + t->name + "' is empty or repeated");
    for (char c : t->name)
      if (c == '/' || static_cast<unsigned char>(c) < 0x20)
        throw Error("npz: array name '" + t->name + "' holds a '/' or a control byte");
    const std::string file = t->name + ".npy";
    const std::string data = npy(*t);
    if (zip.size() + data.size() + 2 * file.size() + 128 > 0xffffffffu)
      throw Error("npz: the arrays exceed 4 GiB, which a zip without zip64 cannot hold");
    const std::uint32_t crc = crc32_of(data.data(), data.size()), size = std::uint32_t(data.size());
    const std::uint32_t offset = std::uint32_t(zip.size());
    put32(zip, 0x04034b50);
    put16(zip, 20);  // version needed: 2.0
    put16(zip, 0);   // flags
    put16(zip, 0);   // stored
    put16(zip, 0);   // time
    put16(zip, kDosDate);
    put32(zip, crc);
    put32(zip, size);
    put32(zip, size);
    put16(zip, std::uint32_t(file.size()));
    put16(zip, 0);  // extra
    zip += file;
    zip += data;

    put32(central, 0x02014b50);
    put16(central, 20);  // made by
    put16(central, 20);  // needed
    put16(central, 0);
    put16(central, 0);
    put16(central, 0);
    put16(central, kDosDate);
    put32(central, crc);
    put32(central, size);
    put32(central, size);
    put16(central, std::uint32_t(file.size()));
    put16(central, 0);  // extra
    put16(central, 0);  // comment
    put16(central, 0);  // disk
    put16(central, 0);  // internal attributes
    put32(central, 0);  // external attributes
    put32(central, offset);
    central += file;
  }
  if (arrays.size() > 0xffff) throw Error("npz: more than 65535 arrays");
  const std::uint32_t central_at = std::uint32_t(zip.size());
  zip += central;
  put32(zip, 0x06054b50);
  put16(zip, 0);
  put16(zip, 0);
  put16(zip, std::uint32_t(arrays.size()));
  put16(zip, std::uint32_t(arrays.size()));
  put32(zip, std::uint32_t(central.size()));
  put32(zip, central_at);
  put16(zip, 0);
  return zip;
}

std::string model_npz_bytes(const ModelFile& m, const std::string& name) {
  const std::vector<ExportLayer> layers = exported_layers(m, name);
  std::vector<const ExportTensor*> arrays = all_tensors(layers);
  const std::int64_t c = m.input.c;
  const ExportTensor scale{"input_scale", {1}, {m.input.scale}};
  const ExportTensor mean{"input_mean", {c}, m.input.mean};
  const ExportTensor stdev{"input_std", {c}, m.input.stdev};
  arrays.push_back(&scale);
  arrays.push_back(&mean);
  arrays.push_back(&stdev);
  return npz_bytes(arrays);
}

}  // namespace sweep::trainer
