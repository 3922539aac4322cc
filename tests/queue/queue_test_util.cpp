/*
 * queue_test_util.cpp — fork/exec with the child's working directory and output files set up
 * before exec, so tests never depend on a shell.
 */
#include "queue_test_util.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <fstream>
#include <sstream>
#include <thread>

#include "sweep/queue/queue_paths.h"
#include "sweep/queue/worker_registry.h"

namespace sweep::queue::testing {

namespace fs = std::filesystem;

namespace {

std::string slurp(const fs::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

pid_t spawn(const fs::path& dir, const std::vector<std::string>& args, const fs::path& out,
            const fs::path& err) {
  std::vector<std::string> argv_text = {SWEEP_BIN};
  argv_text.insert(argv_text.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& arg : argv_text) argv.push_back(arg.data());
  argv.push_back(nullptr);
  const std::string out_path = out.string(), err_path = err.string(), dir_path = dir.string();
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int out_fd = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int err_fd = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int null_fd = ::open("/dev/null", O_RDONLY);
    if (out_fd < 0 || err_fd < 0 || null_fd < 0 || ::chdir(dir_path.c_str()) != 0) ::_exit(126);
    ::dup2(null_fd, 0);
    ::dup2(out_fd, 1);
    ::dup2(err_fd, 2);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  return pid;
}

int exit_code_of(int status) { return WIFEXITED(status) ? WEXITSTATUS(status) : -1; }

}  // namespace

std::string tiny_config(const std::string& name, int trials, int epochs, int train_size,
                        int hidden) {
  std::ostringstream rates;
  for (int i = 0; i < trials; ++i) rates << (i ? ", " : "") << 0.02 + 0.01 * i;
  std::ostringstream text;
  text << "name: " << name << "\n"
       << "data:\n"
       << "  dataset: synthetic\n"
       << "  synthetic: {train_size: " << std::max(64, train_size / kSanitizerShrink)
       << ", test_size: 128, seed: 3}\n"
       << "model: {preset: mlp, hidden: [" << std::max(8, hidden / kSanitizerShrink) << "]}\n"
       << "training:\n"
       << "  optimizer: sgdm\n"
       << "  batch_size: 32\n"
       << "  epochs: " << epochs << "\n"
       << "  checkpoint: {every_epochs: 1}\n"
       << "  seed: 1\n"
       << "sweep:\n"
       << "  method: grid\n"
       << "  metric: {name: val_accuracy, goal: maximize}\n"
       << "  parameters:\n"
       << "    training.learning_rate: {values: [" << rates.str() << "]}\n"
       << "resources: {execution: cpu, cpu_slots: 1, cpu_threads: 1}\n";
  return text.str();
}

QueueDir::QueueDir() {
  static std::atomic<int> counter{0};
  dir_ = fs::temp_directory_path() /
         ("sweep_queue_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
  fs::remove_all(dir_);
  fs::create_directories(dir_ / "home");
}

QueueDir::~QueueDir() {
  for (pid_t pid : children_) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
  }
  // Workers started by `sweep submit` are detached (not our children): find them by their locks.
  try {
    for (const WorkerInfo& worker : alive_workers(QueuePaths(queue_db())))
      if (worker.details.contains("pid")) ::kill(worker.details.at("pid").get<pid_t>(), SIGKILL);
  } catch (const std::exception&) {
  }
  std::error_code ec;
  fs::remove_all(dir_, ec);
}

std::string QueueDir::write(const std::string& file, const std::string& text) const {
  std::ofstream(dir_ / file) << text;
  return (dir_ / file).string();
}

CommandResult QueueDir::sweep(std::vector<std::string> args, std::chrono::seconds timeout) const {
  args.push_back("--queue");
  args.push_back(queue_db().string());
  return sweep_raw(args, timeout);
}

CommandResult QueueDir::sweep_raw(const std::vector<std::string>& args,
                                  std::chrono::seconds timeout) const {
  static std::atomic<int> counter{0};
  const int n = counter++;
  const fs::path out = dir_ / ("cmd" + std::to_string(n) + ".out");
  const fs::path err = dir_ / ("cmd" + std::to_string(n) + ".err");
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = spawn(dir_, args, out, err);
  int status = 0;
  for (;;) {
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (std::chrono::steady_clock::now() - start > timeout) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      ADD_FAILURE() << "sweep command timed out";
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  CommandResult result;
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  result.exit_code = exit_code_of(status);
  result.out = slurp(out);
  result.err = slurp(err);
  return result;
}

pid_t QueueDir::start_worker(std::vector<std::string> args) {
  static std::atomic<int> counter{0};
  const int n = counter++;
  args.insert(args.begin(), {"worker", "--queue", queue_db().string()});
  const pid_t pid = spawn(dir_, args, dir_ / ("worker" + std::to_string(n) + ".out"),
                          dir_ / ("worker" + std::to_string(n) + ".err"));
  children_.push_back(pid);
  return pid;
}

QueueDir::Background QueueDir::start_sweep(std::vector<std::string> args) {
  static std::atomic<int> counter{0};
  const int n = counter++;
  args.push_back("--queue");
  args.push_back(queue_db().string());
  Background command;
  command.out = dir_ / ("background" + std::to_string(n) + ".out");
  command.err = dir_ / ("background" + std::to_string(n) + ".err");
  command.pid = spawn(dir_, args, command.out, command.err);
  children_.push_back(command.pid);
  return command;
}

CommandResult QueueDir::finish(const Background& command, std::chrono::seconds timeout) {
  const auto start = std::chrono::steady_clock::now();
  CommandResult result;
  result.exit_code = wait_exit(command.pid, timeout);
  if (result.exit_code == -1 &&
      std::find(children_.begin(), children_.end(), command.pid) != children_.end()) {
    ADD_FAILURE() << "background sweep command still running after " << timeout.count() << " s";
    kill_hard(command.pid);
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  result.out = slurp(command.out);
  result.err = slurp(command.err);
  return result;
}

void QueueDir::kill_hard(pid_t pid) {
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
  std::erase(children_, pid);
}

int QueueDir::wait_exit(pid_t pid, std::chrono::seconds timeout) {
  int status = 0;
  const bool exited = eventually([&] { return ::waitpid(pid, &status, WNOHANG) == pid; }, timeout);
  if (!exited) return -1;
  std::erase(children_, pid);
  return exit_code_of(status);
}

bool eventually(const std::function<bool()>& done, std::chrono::duration<double> timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (done()) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

std::int64_t job_id_of(const CommandResult& submit) {
  std::size_t used = 0;
  const std::int64_t id = std::stoll(submit.out, &used);
  EXPECT_EQ(submit.out.substr(used), "\n") << "submit printed more than the job id: " << submit.out;
  return id;
}

}  // namespace sweep::queue::testing
