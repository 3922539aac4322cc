/*
 * check.h — the one place that turns a failed library call into an exception.
 *
 * Every CUDA, cuDNN, cuBLAS, SQLite and POSIX call in sweep goes through one of these macros. They
 * throw (never abort), naming the call's text, the file and the line, so one failed trial is
 * recorded as failed and the sweep goes on. The macros only mention the library's symbols when
 * expanded, so this header includes none of the libraries' headers: include the library's own
 * header before using its macro. Destructors must not throw: they use SWEEP_LOG_ON_ERROR instead.
 *
 *   SWEEP_CHECK_CUDA(cudaMalloc(&p, bytes));
 *   SWEEP_CHECK_SQLITE(db, sqlite3_step(stmt));      // SQLITE_OK / SQLITE_ROW / SQLITE_DONE pass
 *   SWEEP_CHECK_SYS(::fsync(fd));                   // -1 fails, with strerror(errno)
 */
#pragma once

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>

namespace sweep {

// Base of every error sweep throws on purpose. `what()` is one line a user can act on.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A library call failed. what() says which call and what the library said ("sqlite3_step()
// failed: disk I/O error"), never where in sweep's source: users act on the call and the reason.
// The full call text and our file:line are kept for a debug log (debug_text(); `sweep` prints it
// when SWEEP_DEBUG=1).
class CallError : public Error {
 public:
  // `out_of_memory`: the library said it could not allocate (cudaErrorMemoryAllocation,
  // CUDNN_STATUS_ALLOC_FAILED, CUBLAS_STATUS_ALLOC_FAILED), which a caller may wait out.
  CallError(std::string call, std::string file, int line, std::string detail,
            bool out_of_memory = false)
      : Error(function_of(call) + " failed: " + detail),
        call_(std::move(call)),
        file_(std::move(file)),
        line_(line),
        detail_(std::move(detail)),
        out_of_memory_(out_of_memory) {}
  // The same failure told in the caller's words ("cannot write runs/x/sweep.db: the disk is
  // full"), keeping the call and the source line of `cause` for the debug text.
  CallError(std::string what, const CallError& cause)
      : Error(std::move(what)),
        call_(cause.call_),
        file_(cause.file_),
        line_(cause.line_),
        detail_(cause.detail_),
        out_of_memory_(cause.out_of_memory_) {}
  const std::string& call() const noexcept { return call_; }
  const std::string& detail() const noexcept { return detail_; }
  bool out_of_memory() const noexcept { return out_of_memory_; }
  // "sqlite3_prepare_v3(db_, sql.data(), ...) failed at sqlite_connection.cpp:41: ..."
  std::string debug_text() const {
    return call_ + " failed at " + file_ + ":" + std::to_string(line_) + ": " + detail_;
  }

  // The library function a call text names: the first name followed by '(' ("sqlite3_step()" of
  // "rc = sqlite3_step(stmt_.get())"), skipping our own unless_* wrappers around POSIX calls; the
  // text itself when it calls nothing.
  static std::string function_of(const std::string& call) {
    std::string name;
    for (std::size_t i = 0; i < call.size(); ++i) {
      const char c = call[i];
      const bool word =
          (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
      if (word) {
        name += c;
        continue;
      }
      if (c == '(' && !name.empty() && name.rfind("unless_", 0) != 0) return name + "()";
      name.clear();
    }
    return call;
  }

 private:
  std::string call_;
  std::string file_;
  int line_;
  std::string detail_;
  bool out_of_memory_ = false;
};

// The device (or host) could not give the memory a trial asked for. The scheduler records the
// trial as failed with this message and the sweep goes on.
class OutOfMemory : public Error {
 public:
  OutOfMemory(const std::string& where, std::size_t bytes_asked, std::size_t bytes_free)
      : Error("out of memory on " + where + ": asked for " + std::to_string(bytes_asked) +
              " bytes, " + std::to_string(bytes_free) + " bytes free"),
        asked_(bytes_asked),
        free_(bytes_free) {}
  std::size_t bytes_asked() const noexcept { return asked_; }
  std::size_t bytes_free() const noexcept { return free_; }

 private:
  std::size_t asked_, free_;
};

[[noreturn]] inline void throw_call_error(const char* call, const char* file, int line,
                                          const std::string& detail, bool out_of_memory = false) {
  throw CallError(call, file, line, detail, out_of_memory);
}

// Strip the directory so messages stay short and stable across build trees.
constexpr const char* short_file(const char* path) {
  const char* last = path;
  for (const char* p = path; *p; ++p)
    if (*p == '/') last = p + 1;
  return last;
}

}  // namespace sweep

#define SWEEP_CHECK_CUDA(call)                                                           \
  do {                                                                                   \
    cudaError_t sweep_e_ = (call);                                                       \
    if (sweep_e_ != cudaSuccess)                                                         \
      ::sweep::throw_call_error(                                                         \
          #call, ::sweep::short_file(__FILE__), __LINE__,                                \
          std::string(cudaGetErrorName(sweep_e_)) + ": " + cudaGetErrorString(sweep_e_), \
          sweep_e_ == cudaErrorMemoryAllocation);                                        \
  } while (0)

// After a kernel launch: launch-configuration errors surface here, not at the next sync.
#define SWEEP_CHECK_LAUNCH() SWEEP_CHECK_CUDA(cudaGetLastError())

#define SWEEP_CHECK_CUDNN(call)                                                 \
  do {                                                                          \
    cudnnStatus_t sweep_s_ = (call);                                            \
    if (sweep_s_ != CUDNN_STATUS_SUCCESS)                                       \
      ::sweep::throw_call_error(#call, ::sweep::short_file(__FILE__), __LINE__, \
                                cudnnGetErrorString(sweep_s_),                  \
                                sweep_s_ == CUDNN_STATUS_ALLOC_FAILED);         \
  } while (0)

#define SWEEP_CHECK_CUBLAS(call)                                                \
  do {                                                                          \
    cublasStatus_t sweep_s_ = (call);                                           \
    if (sweep_s_ != CUBLAS_STATUS_SUCCESS)                                      \
      ::sweep::throw_call_error(#call, ::sweep::short_file(__FILE__), __LINE__, \
                                cublasGetStatusString(sweep_s_),                \
                                sweep_s_ == CUBLAS_STATUS_ALLOC_FAILED);        \
  } while (0)

#define SWEEP_CHECK_NCCL(call)                                                  \
  do {                                                                          \
    ncclResult_t sweep_n_ = (call);                                             \
    if (sweep_n_ != ncclSuccess)                                                \
      ::sweep::throw_call_error(#call, ::sweep::short_file(__FILE__), __LINE__, \
                                ncclGetErrorString(sweep_n_));                  \
  } while (0)

// MPI returns codes once the world communicator has MPI_ERRORS_RETURN (cluster/mpi_transport.cpp).
#define SWEEP_CHECK_MPI(call)                                                               \
  do {                                                                                      \
    int sweep_m_ = (call);                                                                  \
    if (sweep_m_ != MPI_SUCCESS) {                                                          \
      char sweep_t_[MPI_MAX_ERROR_STRING];                                                  \
      int sweep_l_ = 0;                                                                     \
      MPI_Error_string(sweep_m_, sweep_t_, &sweep_l_);                                      \
      ::sweep::throw_call_error(#call, ::sweep::short_file(__FILE__), __LINE__,             \
                                std::string(sweep_t_, static_cast<std::size_t>(sweep_l_))); \
    }                                                                                       \
  } while (0)

#define SWEEP_CHECK_SQLITE(db, call)                                                   \
  do {                                                                                 \
    int sweep_rc_ = (call);                                                            \
    if (sweep_rc_ != SQLITE_OK && sweep_rc_ != SQLITE_ROW && sweep_rc_ != SQLITE_DONE) \
      ::sweep::throw_call_error(                                                       \
          #call, ::sweep::short_file(__FILE__), __LINE__,                              \
          std::string(sqlite3_errstr(sweep_rc_)) +                                     \
              ((db) ? std::string(" (") + sqlite3_errmsg(db) + ")" : std::string()));  \
  } while (0)

#define SWEEP_CHECK_SYS(call)                                                   \
  do {                                                                          \
    if ((call) == -1)                                                           \
      ::sweep::throw_call_error(#call, ::sweep::short_file(__FILE__), __LINE__, \
                                std::strerror(errno));                          \
  } while (0)

// A result computed before (a retry loop around EINTR): -1 fails, reported as the call `name`.
#define SWEEP_CHECK_SYS_RESULT(result, name)                                        \
  do {                                                                              \
    if ((result) == -1)                                                             \
      ::sweep::throw_call_error(name "()", ::sweep::short_file(__FILE__), __LINE__, \
                                std::strerror(errno));                              \
  } while (0)

// For destructors and other noexcept paths: report to stderr, never throw.
#define SWEEP_LOG_ON_ERROR(ok_expr, what)                                            \
  do {                                                                               \
    if (!(ok_expr))                                                                  \
      std::fprintf(stderr, "sweep: %s failed at %s:%d (ignored in cleanup)\n", what, \
                   ::sweep::short_file(__FILE__), __LINE__);                         \
  } while (0)
