/*
 * worker_registry.cpp — flock-based liveness and the double fork that detaches a worker.
 *
 * Between fork() and exec() only async-signal-safe calls are made (setsid, fork, dup2, fcntl,
 * execv, _exit): everything else, the argv included, is prepared before forking, so this is safe
 * from a multi-threaded program that uses the C++ API. The middle process exits at once and is
 * reaped here, so the worker is re-parented to init and never becomes our zombie.
 */
#include "sweep/queue/worker_registry.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <random>
#include <sstream>

#include "common/check.h"
#include "common/json.h"
#include "common/own_file.h"

namespace sweep::queue {

namespace fs = std::filesystem;

UniqueFd::~UniqueFd() {
  if (fd_ >= 0) SWEEP_LOG_ON_ERROR(::close(fd_) == 0, "close");
}

UniqueFd& UniqueFd::operator=(UniqueFd&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) SWEEP_LOG_ON_ERROR(::close(fd_) == 0, "close");
    fd_ = other.release();
  }
  return *this;
}

std::string random_hex(int digits) {
  static thread_local std::mt19937_64 engine{std::random_device{}()};
  static constexpr char kHex[] = "0123456789abcdef";
  std::string text;
  for (int i = 0; i < digits; ++i) text += kHex[engine() % 16];
  return text;
}

namespace {

// The spawn lock, a worker's lock and its log are files of sweep's own (common/own_file.h): a
// symbolic link at one of their names is refused, never followed.
UniqueFd open_file(const fs::path& path, int flags) {
  const int fd = open_own_file(path, flags);
  if (fd == -1) throw Error(path.string() + ": cannot open: " + std::strerror(errno));
  return UniqueFd(fd);
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The caller holds the spawn lock, so no lock file is between its creation and its flock.
std::vector<WorkerInfo> alive_workers_locked(const QueuePaths& paths) {
  std::vector<WorkerInfo> alive;
  std::error_code ec;
  if (!fs::is_directory(paths.workers_dir, ec)) return alive;
  const std::string prefix = paths.stem() + "-";
  for (const auto& entry : fs::directory_iterator(paths.workers_dir, ec)) {
    const std::string file = entry.path().filename().string();
    if (entry.path().extension() != ".lock" || file.rfind(prefix, 0) != 0) continue;
    const int raw = ::open(entry.path().c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (raw == -1) continue;  // removed meanwhile by another checker, or not a worker's file
    UniqueFd fd(raw);
    if (::flock(fd.get(), LOCK_EX | LOCK_NB) == 0) {
      // Nobody holds it: its worker died. Removed while we hold the lock, so no worker loses it.
      fs::remove(entry.path(), ec);
      continue;
    }
    WorkerInfo info;
    info.id = file.substr(prefix.size(), file.size() - prefix.size() - 5);
    info.details = sweep::Json::parse(read_text(entry.path()), nullptr, false);
    if (info.details.is_discarded()) info.details = sweep::Json::object();
    alive.push_back(std::move(info));
  }
  return alive;
}

}  // namespace

SpawnLock::SpawnLock(const QueuePaths& paths) {
  fs::create_directories(paths.workers_dir);
  fd_ = open_file(paths.spawn_lock(), O_RDWR | O_CREAT);
  int rc;
  while ((rc = ::flock(fd_.get(), LOCK_EX)) == -1 && errno == EINTR) {
  }
  SWEEP_CHECK_SYS_RESULT(rc, "flock");
}

std::vector<WorkerInfo> alive_workers(const QueuePaths& paths) {
  std::error_code ec;
  if (!fs::is_directory(paths.workers_dir, ec)) return {};
  SpawnLock spawn(paths);
  return alive_workers_locked(paths);
}

bool worker_alive(const QueuePaths& paths, std::string_view owner) {
  for (const WorkerInfo& worker : alive_workers(paths))
    if (const auto it = worker.details.find("owner");
        it != worker.details.end() && it->is_string() && it->get<std::string>() == owner)
      return true;
  return false;
}

WorkerRegistration::WorkerRegistration(const QueuePaths& paths) : id_(random_hex(8)) {
  SpawnLock spawn(paths);
  lock_path_ = paths.worker_lock(id_);
  fd_ = open_file(lock_path_, O_RDWR | O_CREAT);
  SWEEP_CHECK_SYS(::flock(fd_.get(), LOCK_EX | LOCK_NB));
}

WorkerRegistration::WorkerRegistration(const QueuePaths& paths, int inherited_fd, std::string id)
    : lock_path_(paths.worker_lock(id)), id_(std::move(id)), fd_(inherited_fd) {
  SWEEP_CHECK_SYS(::fcntl(fd_.get(), F_SETFD, FD_CLOEXEC));
  // The lock is ours already (shared open file description); LOCK_EX on it again is a no-op
  // that fails loudly if the fd was not the lock after all.
  SWEEP_CHECK_SYS(::flock(fd_.get(), LOCK_EX | LOCK_NB));
}

WorkerRegistration::~WorkerRegistration() { release(); }

void WorkerRegistration::release() {
  if (fd_.get() < 0) return;
  std::error_code ec;
  fs::remove(lock_path_, ec);  // before the lock goes, so no checker removes a newer file
  fd_ = UniqueFd();
}

void WorkerRegistration::describe(const sweep::Json& details) {
  const std::string text = details.dump() + "\n";
  SWEEP_CHECK_SYS(::ftruncate(fd_.get(), 0));
  SWEEP_CHECK_SYS(::pwrite(fd_.get(), text.data(), text.size(), 0));
}

std::string start_detached_worker(const QueuePaths& paths, const DetachedWorkerOptions& options) {
  if (::access(options.sweep_binary.c_str(), X_OK) != 0)
    throw Error("cannot start a worker: '" + options.sweep_binary + "' is not an executable");
  SpawnLock spawn(paths);
  if (options.only_if_none_alive && !alive_workers_locked(paths).empty()) return "";

  const std::string id = random_hex(8);
  UniqueFd lock_file = open_file(paths.worker_lock(id), O_RDWR | O_CREAT);
  SWEEP_CHECK_SYS(::flock(lock_file.get(), LOCK_EX | LOCK_NB));
  // Above 2 and not 3, so the dup2 onto fd 3 below is a real copy without FD_CLOEXEC.
  UniqueFd lock(::fcntl(lock_file.get(), F_DUPFD_CLOEXEC, 10));
  SWEEP_CHECK_SYS(lock.get());
  UniqueFd log = open_file(paths.worker_log(id), O_WRONLY | O_CREAT | O_APPEND);
  UniqueFd null(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  SWEEP_CHECK_SYS(null.get());

  std::vector<std::string> args = {options.sweep_binary, "worker", "--queue",     paths.db.string(),
                                   "--registration-fd",  "3",      "--worker-id", id};
  args.insert(args.end(), options.worker_args.begin(), options.worker_args.end());
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);

  const pid_t child = ::fork();
  SWEEP_CHECK_SYS_RESULT(child, "fork");
  if (child == 0) {
    if (::setsid() == -1) ::_exit(127);
    const pid_t worker = ::fork();
    if (worker != 0) ::_exit(worker < 0 ? 127 : 0);
    if (::dup2(null.get(), 0) == -1 || ::dup2(log.get(), 1) == -1 || ::dup2(log.get(), 2) == -1 ||
        ::dup2(lock.get(), 3) == -1)
      ::_exit(127);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  int status = 0;
  pid_t waited;
  while ((waited = ::waitpid(child, &status, 0)) == -1 && errno == EINTR) {
  }
  SWEEP_CHECK_SYS_RESULT(waited, "waitpid");
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw Error("cannot start a worker: its launcher process ended with status " +
                std::to_string(status) + " (see " + paths.worker_log(id).string() + ")");
  return id;
}

}  // namespace sweep::queue
