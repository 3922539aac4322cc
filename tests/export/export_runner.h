/*
 * export_runner.h — what the export tests run outside the process: Debian's python3 (numpy,
 * onnx.checker) and node with onnxruntime-node, each found or reported missing with the reason.
 */
#pragma once

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace sweep::trainer::testing {

namespace fs = std::filesystem;

// The output and exit status of a shell command line (stderr folded in).
struct Ran {
  int status = -1;
  std::string output;
};
inline Ran run_command(const std::string& line) {
  Ran r;
  FILE* p = ::popen((line + " 2>&1").c_str(), "r");
  if (!p) return r;
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.output.append(buf, n);
  r.status = ::pclose(p);
  return r;
}

inline std::string quoted(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// Debian's python3 (its packages python3-numpy / python3-onnx are for /usr/bin/python3, not a
// pyenv shim first on PATH) when it imports `module`, else "".
inline std::string python_with(const std::string& module) {
  const std::string python = "/usr/bin/python3";
  if (!fs::exists(python)) return "";
  return run_command(python + " -c 'import " + module + "'").status == 0 ? python : "";
}

// The node_modules directory holding onnxruntime-node: $SWEEP_ONNXRUNTIME_NODE, else where
// scripts/install-deps --tests puts it; "" when node or the package is missing.
inline std::string onnxruntime_node_modules() {
  if (run_command("node --version").status != 0) return "";
  std::vector<std::string> places;
  if (const char* env = std::getenv("SWEEP_ONNXRUNTIME_NODE")) places.push_back(env);
  places.push_back("/opt/sweep-test-deps/onnxruntime/node_modules");
  for (const std::string& p : places)
    if (fs::exists(fs::path(p) / "onnxruntime-node" / "package.json")) return p;
  return "";
}

inline void write_floats(const std::string& path, const std::vector<float>& v) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(v.data()), std::streamsize(v.size() * sizeof(float)));
}
inline std::vector<float> read_floats(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> b{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  std::vector<float> v(b.size() / sizeof(float));
  if (!v.empty()) std::memcpy(v.data(), b.data(), v.size() * sizeof(float));
  return v;
}

}  // namespace sweep::trainer::testing
