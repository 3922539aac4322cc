/*
 * fault_vfs.h — an SQLite VFS for tests that fails the Nth call of one kind (a write, an fsync, a
 * read, a truncate, the opening of a journal or WAL file), as SQLite's own I/O-error tests do.
 *
 * It wraps the default VFS: every call goes through to the real file, except the one armed to
 * fail, which returns the I/O error SQLite would get from a failing disk. Register one FaultVfs
 * per process (tests), then open a Store with StoreOptions::vfs = FaultVfs::kName.
 *
 *   FaultVfs faults;
 *   faults.arm(Fault::write, 3);           // the 3rd write from now fails
 *   Store store(path, {.vfs = FaultVfs::kName});
 */
#pragma once

#include <atomic>

namespace sweep::test {

enum class Fault { write, sync, read, truncate, open_journal };
inline constexpr Fault kAllFaults[] = {Fault::write, Fault::sync, Fault::read, Fault::truncate,
                                       Fault::open_journal};
const char* to_string(Fault fault);

class FaultVfs {
 public:
  static constexpr const char* kName = "sweep-fault";

  FaultVfs();   // registers the VFS (not as the default)
  ~FaultVfs();  // unregisters it
  FaultVfs(const FaultVfs&) = delete;
  FaultVfs& operator=(const FaultVfs&) = delete;

  // From now, the `nth` (1-based) call of `kind` fails; 0 disarms. Counts restart.
  void arm(Fault kind, int nth);
  bool fired() const;  // whether the armed call came and failed
};

}  // namespace sweep::test
