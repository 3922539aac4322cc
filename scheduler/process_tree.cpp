/*
 * process_tree.cpp — one pass over /proc per look: each process's parent (from /proc/PID/stat,
 * whose second field, the command, may itself hold spaces and parentheses: the parent is read
 * after the last ')') and, for ours, its environment (/proc/PID/environ, NUL-separated).
 * Processes that vanish between listing and reading are skipped: they need no ending.
 */
#include "scheduler/process_tree.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <map>
#include <random>
#include <sstream>
#include <thread>

#include "scheduler/child_process.h"

namespace sweep::scheduler::detail {

namespace {

struct ProcInfo {
  pid_t pid;
  pid_t parent;
  bool zombie;
};

// The file's bytes, or "" when it cannot be read whole. A process that exits while its /proc
// files are read makes read() fail (ESRCH), which std::ifstream turned into an exception
// (libstdc++'s "basic_filebuf::underflow error reading the file"): under load that failed an
// external trial at its end. Plain read() reports it, and a vanished process reads as gone.
std::string read_all(const std::filesystem::path& path) {
  const FileDescriptor fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return {};
  std::string bytes;
  char buffer[4096];
  for (;;) {
    const ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
    if (n > 0) {
      bytes.append(buffer, static_cast<std::size_t>(n));
    } else if (n == 0) {
      return bytes;
    } else if (errno != EINTR) {
      return {};
    }
  }
}

std::vector<ProcInfo> list_processes() {
  std::vector<ProcInfo> all;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    const std::string stat = read_all(entry.path() / "stat");
    const auto close = stat.rfind(')');
    if (close == std::string::npos) continue;  // gone meanwhile
    std::istringstream rest(stat.substr(close + 1));
    char state = '?';
    long parent = 0;
    rest >> state >> parent;
    all.push_back({static_cast<pid_t>(std::stol(name)), static_cast<pid_t>(parent), state == 'Z'});
  }
  return all;
}

// Whether the process's environment holds `token_entry`, or with `prefix` an entry starting so.
bool holds_token(pid_t pid, const std::string& token_entry, bool prefix = false) {
  const std::string environ = read_all("/proc/" + std::to_string(pid) + "/environ");
  std::size_t start = 0;
  while (start < environ.size()) {
    std::size_t end = environ.find('\0', start);
    if (end == std::string::npos) end = environ.size();
    const std::size_t length = prefix ? std::min(end - start, token_entry.size()) : end - start;
    if (environ.compare(start, length, token_entry) == 0) return true;
    start = end + 1;
  }
  return false;
}

}  // namespace

// The start every token this process makes shares.
std::string our_token_prefix() { return "SWEEP_TRIAL_TOKEN=" + std::to_string(::getpid()) + "-"; }

std::string new_trial_token_entry() {
  static std::atomic<unsigned long> counter{0};
  std::random_device random;
  return our_token_prefix() + std::to_string(++counter) + "-" + std::to_string(random());
}

std::size_t kill_processes_of_our_trials() {
  const std::string prefix = our_token_prefix();
  const pid_t self = ::getpid();
  std::size_t signalled = 0;
  for (const ProcInfo& p : list_processes())
    if (p.pid != self && !p.zombie && holds_token(p.pid, prefix, true) &&
        ::kill(p.pid, SIGKILL) == 0)
      ++signalled;
  return signalled;
}

std::vector<pid_t> trial_processes(pid_t root, const std::string& token_entry) {
  const std::vector<ProcInfo> all = list_processes();
  std::multimap<pid_t, pid_t> children;  // parent → child
  for (const ProcInfo& p : all) children.emplace(p.parent, p.pid);
  std::map<pid_t, bool> found;  // pid → zombie
  std::map<pid_t, bool> zombie;
  for (const ProcInfo& p : all) zombie[p.pid] = p.zombie;
  // Descendants of root, breadth first.
  std::vector<pid_t> frontier;
  if (root > 0 && zombie.count(root)) frontier.push_back(root);
  while (!frontier.empty()) {
    const pid_t pid = frontier.back();
    frontier.pop_back();
    if (!found.emplace(pid, zombie[pid]).second) continue;
    const auto [first, last] = children.equal_range(pid);
    for (auto it = first; it != last; ++it) frontier.push_back(it->second);
  }
  // Holders of the token anywhere (re-parented away).
  const pid_t self = ::getpid();
  for (const ProcInfo& p : all)
    if (p.pid != self && !found.count(p.pid) && !p.zombie && holds_token(p.pid, token_entry))
      found.emplace(p.pid, false);
  std::vector<pid_t> live;
  for (const auto& [pid, is_zombie] : found)
    if (!is_zombie) live.push_back(pid);
  return live;
}

namespace {

// SIGTERM to what `find` finds, up to `grace_s` for it to go, SIGKILL to what is left: a few
// rounds, since a process forking as fast as we kill could outrun one. Returns how many the
// first look found.
template <class Find>
std::size_t end_found(const Find& find, double grace_s) {
  const auto signal_all = [&](int signal) {
    const std::vector<pid_t> found = find();
    for (const pid_t pid : found) ::kill(pid, signal);
    return found.size();
  };
  const std::size_t first = signal_all(SIGTERM);
  if (first == 0) return 0;
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::duration<double>(std::max(grace_s, 0.0));
  while (std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (find().empty()) return first;
  }
  for (int round = 0; round < 5 && signal_all(SIGKILL) > 0; ++round)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  return first;
}

}  // namespace

std::size_t end_processes_holding(const std::string& entry, double grace_s) {
  const pid_t self = ::getpid();
  return end_found(
      [&] {
        std::vector<pid_t> found;
        for (const ProcInfo& p : list_processes())
          if (p.pid != self && !p.zombie && holds_token(p.pid, entry)) found.push_back(p.pid);
        return found;
      },
      grace_s);
}

std::size_t signal_trial(pid_t root, const std::string& token_entry, int signal) {
  std::size_t signalled = 0;
  for (const pid_t pid : trial_processes(root, token_entry))
    if (::kill(pid, signal) == 0) ++signalled;
  return signalled;
}

void end_trial_processes(pid_t root, const std::string& token_entry, double grace_s) {
  end_found([&] { return trial_processes(root, token_entry); }, grace_s);
}

}  // namespace sweep::scheduler::detail
