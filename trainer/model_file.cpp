/*
 * model_file.cpp — the model file's bytes: written whole, read with every size checked against
 * the header before it is used, and the description checked key by key.
 */
#include "trainer/model_file.h"

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>

#include "common/own_file.h"
#include "trainer/crc32.h"

namespace sweep::trainer {

namespace {

constexpr char kMagic[8] = {'S', 'W', 'E', 'E', 'P', 'M', 'D', 'L'};
constexpr std::uint32_t kVersion = 1;
constexpr std::size_t kHeaderBytes = sizeof kMagic + 4 + 3 * 8;
constexpr int kMaxSide = 1 << 20;     // a shape's dimension
constexpr int kMaxOutputs = 1 << 24;  // the network's outputs

template <class T>
void put(std::vector<std::uint8_t>& out, const T& v) {
  const auto* p = reinterpret_cast<const std::uint8_t*>(&v);
  out.insert(out.end(), p, p + sizeof(T));
}
template <class T>
T get(const std::vector<std::uint8_t>& in, std::size_t at) {
  T v;
  std::memcpy(&v, in.data() + at, sizeof(T));
  return v;
}

Json description(const ModelFile& m) {
  Json input = {{"c", m.input.c},         {"h", m.input.h},
                {"w", m.input.w},         {"values", m.input.is_float ? "float" : "uint8"},
                {"scale", m.input.scale}, {"mean", m.input.mean},
                {"stdev", m.input.stdev}};
  if (m.input.decode)
    input["decode"] = {{"channels", m.input.decode->channels},
                       {"height", m.input.decode->height},
                       {"width", m.input.decode->width},
                       {"resize", m.input.decode->resize}};
  if (!m.input.columns.empty()) {
    input["columns"] = m.input.columns;
    input["label_column"] = m.input.label_column;
  }
  return Json{{"task", m.regression ? "regression" : "classification"},
              {"outputs", m.outputs},
              {"class_names", m.class_names},
              {"input", input},
              {"layers", m.layers},
              {"sweep", m.sweep},
              {"trial", m.trial},
              {"output_network", m.output_network}};
}

// Reads the description's keys, each checked for presence, type and range.
class Description {
 public:
  Description(const std::string& name) : name_(name) {}

  [[noreturn]] void fail(const std::string& what) const {
    throw Error(name_ + ": not a model this build reads: " + what);
  }
  const Json& key(const Json& obj, const char* k, const std::string& where) const {
    if (!obj.is_object()) fail(where + " is not an object");
    const auto it = obj.find(k);
    if (it == obj.end()) fail("missing key '" + where + k + "'");
    return *it;
  }
  std::int64_t integer(const Json& obj, const char* k, const std::string& where, std::int64_t lo,
                       std::int64_t hi) const {
    const Json& v = key(obj, k, where);
    if (!v.is_number_integer()) fail("key '" + where + k + "' is not an integer");
    const std::int64_t n = v.get<std::int64_t>();
    if (n < lo || n > hi)
      fail("key '" + where + k + "' is " + std::to_string(n) + ", expected " + std::to_string(lo) +
           ".." + std::to_string(hi));
    return n;
  }
  std::string text(const Json& obj, const char* k, const std::string& where) const {
    const Json& v = key(obj, k, where);
    if (!v.is_string()) fail("key '" + where + k + "' is not text");
    return v.get<std::string>();
  }
  float positive(const Json& obj, const char* k, const std::string& where) const {
    const Json& v = key(obj, k, where);
    if (!v.is_number() || !std::isfinite(v.get<double>()) || !(v.get<double>() > 0))
      fail("key '" + where + k + "' is not a finite positive number");
    return static_cast<float>(v.get<double>());
  }
  std::vector<float> floats(const Json& obj, const char* k, const std::string& where,
                            std::size_t count, bool positive) const {
    const Json& v = key(obj, k, where);
    if (!v.is_array() || v.size() != count)
      fail("key '" + where + k + "' is not a list of " + std::to_string(count) + " numbers");
    std::vector<float> out;
    for (const Json& x : v) {
      if (!x.is_number()) fail("key '" + where + k + "' holds something other than a number");
      const double d = x.get<double>();
      if (!std::isfinite(d) || (positive && !(d > 0)))
        fail("key '" + where + k + "' holds " + std::to_string(d) + ", expected a finite" +
             (positive ? " positive" : "") + " number");
      out.push_back(static_cast<float>(d));
    }
    return out;
  }

 private:
  const std::string& name_;
};

void read_description(const Json& j, ModelFile& m, const std::string& name) {
  const Description d(name);
  const std::string task = d.text(j, "task", "");
  if (task != "classification" && task != "regression")
    d.fail("key 'task' is '" + task + "', expected classification or regression");
  m.regression = task == "regression";
  m.outputs = int(d.integer(j, "outputs", "", 1, kMaxOutputs));
  if (m.regression && m.outputs != 1)
    d.fail("key 'outputs' is " + std::to_string(m.outputs) + " for regression, expected 1");
  const Json& names = d.key(j, "class_names", "");
  if (!names.is_array()) d.fail("key 'class_names' is not a list");
  for (const Json& n : names) {
    if (!n.is_string()) d.fail("key 'class_names' holds something other than text");
    m.class_names.push_back(n.get<std::string>());
  }
  if (!m.class_names.empty() && (m.regression || int(m.class_names.size()) != m.outputs))
    d.fail("key 'class_names' has " + std::to_string(m.class_names.size()) +
           " names for a network of " + std::to_string(m.outputs) + " outputs");
  const Json& in = d.key(j, "input", "");
  m.input.c = int(d.integer(in, "c", "input.", 1, kMaxModelChannels));
  m.input.h = int(d.integer(in, "h", "input.", 1, kMaxSide));
  m.input.w = int(d.integer(in, "w", "input.", 1, kMaxSide));
  const std::string values = d.text(in, "values", "input.");
  if (values != "uint8" && values != "float")
    d.fail("key 'input.values' is '" + values + "', expected uint8 or float");
  m.input.is_float = values == "float";
  m.input.scale = d.positive(in, "scale", "input.");
  m.input.mean = d.floats(in, "mean", "input.", std::size_t(m.input.c), false);
  m.input.stdev = d.floats(in, "stdev", "input.", std::size_t(m.input.c), true);
  if (in.is_object() && in.contains("decode")) {
    const Json& dec = in["decode"];
    ModelImageDecode s;
    s.channels = int(d.integer(dec, "channels", "input.decode.", 0, 3));
    s.height = int(d.integer(dec, "height", "input.decode.", 0, kMaxSide));
    s.width = int(d.integer(dec, "width", "input.decode.", 0, kMaxSide));
    s.resize = d.text(dec, "resize", "input.decode.");
    if (s.channels == 2) d.fail("key 'input.decode.channels' is 2, expected 0, 1 or 3");
    m.input.decode = s;
  }
  if (in.contains("columns")) {
    const Json& cols = in["columns"];
    if (!cols.is_array() || int(cols.size()) != m.input.c * m.input.h * m.input.w)
      d.fail("key 'input.columns' is not a list of " +
             std::to_string(m.input.c * m.input.h * m.input.w) + " column names");
    for (const Json& c : cols) {
      if (!c.is_string()) d.fail("key 'input.columns' holds something other than text");
      m.input.columns.push_back(c.get<std::string>());
    }
    m.input.label_column = d.text(in, "label_column", "input.");
  }
  m.layers = d.key(j, "layers", "");
  if (!m.layers.is_array() || m.layers.empty()) d.fail("key 'layers' is not a list of layers");
  m.sweep = d.text(j, "sweep", "");
  m.trial = d.integer(j, "trial", "", -1, std::numeric_limits<std::int64_t>::max());
  m.output_network = d.text(j, "output_network", "");
}

}  // namespace

std::vector<std::uint8_t> model_file_bytes(const ModelFile& m) {
  const std::string text = json_text(description(m));
  std::vector<std::uint8_t> out;
  out.reserve(kHeaderBytes + text.size() + (m.params.size() + m.state.size()) * 4 + 4);
  out.assign(kMagic, kMagic + sizeof kMagic);
  put(out, kVersion);
  put(out, std::uint64_t(text.size()));
  put(out, std::uint64_t(m.params.size()));
  put(out, std::uint64_t(m.state.size()));
  out.insert(out.end(), text.begin(), text.end());
  for (const std::vector<float>* v : {&m.params, &m.state}) {
    const auto* p = reinterpret_cast<const std::uint8_t*>(v->data());
    out.insert(out.end(), p, p + v->size() * sizeof(float));
  }
  put(out, crc32_of(out.data(), out.size()));
  return out;
}

void write_model_file(const std::string& path, const ModelFile& model) {
  const std::vector<std::uint8_t> bytes = model_file_bytes(model);
  write_own_file_durably(
      path, std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()),
      "model file");
}

namespace {

// The header's claims, checked: the whole size of the file they describe.
struct Header {
  std::uint64_t text = 0, params = 0, state = 0;
  std::uint64_t total() const { return kHeaderBytes + text + (params + state) * 4 + 4; }
};

Header read_header(const std::vector<std::uint8_t>& b, const std::string& name) {
  if (b.size() < sizeof kMagic || std::memcmp(b.data(), kMagic, sizeof kMagic) != 0)
    throw Error(name +
                ": not a sweep model file (bad magic; expected a file that `sweep run` "
                "writes as " +
                kModelFileName + ")");
  if (b.size() < kHeaderBytes)
    throw Error(name + ": model file is truncated (expected at least " +
                std::to_string(kHeaderBytes) + " bytes, got " + std::to_string(b.size()) + ")");
  const auto version = get<std::uint32_t>(b, 8);
  if (version != kVersion)
    throw Error(name + ": model file version " + std::to_string(version) +
                ", this build reads version " + std::to_string(kVersion));
  Header h{get<std::uint64_t>(b, 12), get<std::uint64_t>(b, 20), get<std::uint64_t>(b, 28)};
  if (h.text > kMaxModelDescriptionBytes)
    throw Error(name + ": model file claims a description of " + std::to_string(h.text) +
                " bytes, at most " + std::to_string(kMaxModelDescriptionBytes) + " are read");
  if (h.params > kMaxModelFloats || h.state > kMaxModelFloats)
    throw Error(name + ": model file claims " + std::to_string(h.params) + " parameters and " +
                std::to_string(h.state) + " state values, at most " +
                std::to_string(kMaxModelFloats) + " each are read");
  return h;
}

ModelFile parse_whole(const std::vector<std::uint8_t>& b, const Header& h,
                      const std::string& name) {
  if (b.size() != h.total())
    throw Error(name + ": model file is " + (b.size() < h.total() ? "truncated" : "too long") +
                " (its header says " + std::to_string(h.total()) + " bytes, got " +
                std::to_string(b.size()) + ")");
  const std::size_t body = b.size() - 4;
  if (crc32_of(b.data(), body) != get<std::uint32_t>(b, body))
    throw Error(name + ": model file is corrupt (CRC-32 mismatch)");
  const char* text = reinterpret_cast<const char*>(b.data() + kHeaderBytes);
  const Json j = Json::parse(text, text + h.text, nullptr, false);
  if (j.is_discarded()) throw Error(name + ": model file's description is not valid JSON");
  ModelFile m;
  read_description(j, m, name);
  std::size_t at = kHeaderBytes + std::size_t(h.text);
  for (auto [v, n] : {std::pair{&m.params, h.params}, std::pair{&m.state, h.state}}) {
    v->resize(std::size_t(n));
    if (n) std::memcpy(v->data(), b.data() + at, std::size_t(n) * 4);
    at += std::size_t(n) * 4;
  }
  return m;
}

}  // namespace

ModelFile parse_model_file(const std::vector<std::uint8_t>& bytes, const std::string& name) {
  return parse_whole(bytes, read_header(bytes, name), name);
}

ModelFile read_model_file(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw Error(path + ": model file is missing (a trial writes " + kModelFileName +
                " into its directory when it ends)");
  const auto size = std::filesystem::file_size(path, ec);
  std::ifstream in(path, std::ios::binary);
  if (!in || ec) throw Error(path + ": cannot open the model file for reading");
  std::vector<std::uint8_t> bytes(std::min<std::uintmax_t>(size, kHeaderBytes));
  in.read(reinterpret_cast<char*>(bytes.data()), std::streamsize(bytes.size()));
  bytes.resize(std::size_t(in.gcount()));
  const Header h = read_header(bytes, path);
  // The header fixes the file's size: any other is refused before the rest is read.
  if (size != h.total())
    throw Error(path + ": model file is " + (size < h.total() ? "truncated" : "too long") +
                " (its header says " + std::to_string(h.total()) + " bytes, got " +
                std::to_string(size) + ")");
  bytes.resize(std::size_t(h.total()));
  in.read(reinterpret_cast<char*>(bytes.data() + kHeaderBytes),
          std::streamsize(bytes.size() - kHeaderBytes));
  if (std::uint64_t(in.gcount()) != h.total() - kHeaderBytes)
    throw Error(path + ": model file is truncated (read stopped early)");
  return parse_whole(bytes, h, path);
}

}  // namespace sweep::trainer
