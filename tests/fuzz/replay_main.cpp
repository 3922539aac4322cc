/*
 * replay_main.cpp — the replay test of a fuzz target (ctest label fuzz): feeds every file of the
 * directories given (the target's seed corpus and its kept crash inputs) to the harness's
 * LLVMFuzzerTestOneInput, built with the ordinary compiler and no libFuzzer.
 *
 * Each file runs in a child process of its own, with the limits scripts/fuzz gives libFuzzer
 * (kTimeoutSeconds per input; kMemoryBytes of address space when not under a sanitizer), so one
 * crash, escaped exception, hang or memory blow-up fails the test naming its file and the others
 * still run. A missing directory is skipped (a target has regressions/ only once something was
 * kept); no file at all fails, and so does a file longer than the target's MAX_LEN.
 *
 *   sweep_fuzz_replay_idx tests/fuzz/corpus/idx tests/fuzz/regressions/idx
 */
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <typeinfo>
#include <vector>

#include "fuzz_target.h"

namespace {

constexpr unsigned kTimeoutSeconds = 25;
constexpr rlim_t kMemoryBytes = rlim_t(2) << 30;

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitized = true;  // sanitizers reserve terabytes of address space
#else
constexpr bool kSanitized = false;
#endif

std::vector<std::uint8_t> read_all(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// In the child: run one input, exit 0 when the harness returned, 1 when an exception escaped.
[[noreturn]] void run_child(const std::filesystem::path& path,
                            const std::vector<std::uint8_t>& bytes) {
  if (!kSanitized) {
    const rlimit limit{kMemoryBytes, kMemoryBytes};
    setrlimit(RLIMIT_AS, &limit);
  }
  alarm(kTimeoutSeconds);
  try {
    LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
  } catch (const std::exception& e) {
    std::cerr << path.string() << ": uncaught " << typeid(e).name() << ": " << e.what() << "\n";
    _exit(1);
  } catch (...) {
    std::cerr << path.string() << ": uncaught exception not derived from std::exception\n";
    _exit(1);
  }
  _exit(0);
}

// "" when the input passed, else why it failed.
std::string replay(const std::filesystem::path& path) {
  const std::vector<std::uint8_t> bytes = read_all(path);
  if (bytes.size() > kFuzzMaxLen)
    return std::to_string(bytes.size()) + " bytes, longer than the target's MAX_LEN " +
           std::to_string(kFuzzMaxLen);
  std::cout.flush();
  const pid_t pid = fork();
  if (pid < 0) return std::string("fork failed: ") + std::strerror(errno);
  if (pid == 0) run_child(path, bytes);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status))
    return WEXITSTATUS(status) == 0 ? "" : "exit status " + std::to_string(WEXITSTATUS(status));
  const int sig = WTERMSIG(status);
  if (sig == SIGALRM) return "timed out (" + std::to_string(kTimeoutSeconds) + " s)";
  return std::string("killed by signal ") + std::to_string(sig) + " (" + strsignal(sig) + ")";
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::filesystem::path> files;
  for (int i = 1; i < argc; ++i) {
    std::error_code ec;
    if (!std::filesystem::is_directory(argv[i], ec)) {
      std::cout << argv[i] << ": no such directory, skipped\n";
      continue;
    }
    for (const auto& entry : std::filesystem::directory_iterator(argv[i]))
      if (entry.is_regular_file() && entry.path().filename().string()[0] != '.')
        files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  if (files.empty()) {
    std::cout << "no input files to replay\n";
    return 1;
  }
  int failed = 0;
  for (const auto& file : files) {
    const std::string why = replay(file);
    if (why.empty()) continue;
    ++failed;
    std::cout << "FAILED " << file.string() << ": " << why << "\n";
  }
  std::cout << files.size() << " inputs replayed, " << failed << " failed\n";
  return failed == 0 ? 0 : 1;
}
