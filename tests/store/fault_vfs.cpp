/*
 * fault_vfs.cpp — the wrapping VFS. Our file object is SQLite's allocation (szOsFile covers our
 * header plus the real file right behind it), so nothing is allocated per file. The arming is
 * process-wide state: one FaultVfs at a time, used from one test thread.
 */
#include "fault_vfs.h"

#include <sqlite3.h>

#include <stdexcept>

namespace sweep::test {

namespace {

std::atomic<int> g_armed_kind{-1};
std::atomic<int> g_countdown{0};
std::atomic<bool> g_fired_flag{false};
sqlite3_vfs* g_real = nullptr;
sqlite3_vfs g_vfs;

// True when this call of `kind` is the one to fail.
bool should_fail(Fault kind) {
  if (g_armed_kind.load() != static_cast<int>(kind)) return false;
  if (g_countdown.fetch_sub(1) != 1) return false;
  g_armed_kind = -1;
  g_fired_flag = true;
  return true;
}

struct FaultFile {
  sqlite3_file base;
  sqlite3_file* real() { return reinterpret_cast<sqlite3_file*>(this + 1); }
};

FaultFile* of(sqlite3_file* f) { return reinterpret_cast<FaultFile*>(f); }
const sqlite3_io_methods* real_methods(sqlite3_file* f) { return of(f)->real()->pMethods; }

int x_close(sqlite3_file* f) { return real_methods(f)->xClose(of(f)->real()); }
int x_read(sqlite3_file* f, void* out, int n, sqlite3_int64 off) {
  if (should_fail(Fault::read)) return SQLITE_IOERR_READ;
  return real_methods(f)->xRead(of(f)->real(), out, n, off);
}
int x_write(sqlite3_file* f, const void* in, int n, sqlite3_int64 off) {
  if (should_fail(Fault::write)) return SQLITE_IOERR_WRITE;
  return real_methods(f)->xWrite(of(f)->real(), in, n, off);
}
int x_truncate(sqlite3_file* f, sqlite3_int64 size) {
  if (should_fail(Fault::truncate)) return SQLITE_IOERR_TRUNCATE;
  return real_methods(f)->xTruncate(of(f)->real(), size);
}
int x_sync(sqlite3_file* f, int flags) {
  if (should_fail(Fault::sync)) return SQLITE_IOERR_FSYNC;
  return real_methods(f)->xSync(of(f)->real(), flags);
}
int x_file_size(sqlite3_file* f, sqlite3_int64* size) {
  return real_methods(f)->xFileSize(of(f)->real(), size);
}
int x_lock(sqlite3_file* f, int level) { return real_methods(f)->xLock(of(f)->real(), level); }
int x_unlock(sqlite3_file* f, int level) { return real_methods(f)->xUnlock(of(f)->real(), level); }
int x_check_reserved(sqlite3_file* f, int* out) {
  return real_methods(f)->xCheckReservedLock(of(f)->real(), out);
}
int x_file_control(sqlite3_file* f, int op, void* arg) {
  return real_methods(f)->xFileControl(of(f)->real(), op, arg);
}
int x_sector_size(sqlite3_file* f) { return real_methods(f)->xSectorSize(of(f)->real()); }
int x_device_characteristics(sqlite3_file* f) {
  return real_methods(f)->xDeviceCharacteristics(of(f)->real());
}
int x_shm_map(sqlite3_file* f, int page, int size, int extend, void volatile** out) {
  return real_methods(f)->xShmMap(of(f)->real(), page, size, extend, out);
}
int x_shm_lock(sqlite3_file* f, int offset, int n, int flags) {
  return real_methods(f)->xShmLock(of(f)->real(), offset, n, flags);
}
void x_shm_barrier(sqlite3_file* f) { real_methods(f)->xShmBarrier(of(f)->real()); }
int x_shm_unmap(sqlite3_file* f, int delete_flag) {
  return real_methods(f)->xShmUnmap(of(f)->real(), delete_flag);
}
int x_fetch(sqlite3_file* f, sqlite3_int64 off, int n, void** out) {
  return real_methods(f)->xFetch(of(f)->real(), off, n, out);
}
int x_unfetch(sqlite3_file* f, sqlite3_int64 off, void* p) {
  return real_methods(f)->xUnfetch(of(f)->real(), off, p);
}

const sqlite3_io_methods kMethods = {3,
                                     x_close,
                                     x_read,
                                     x_write,
                                     x_truncate,
                                     x_sync,
                                     x_file_size,
                                     x_lock,
                                     x_unlock,
                                     x_check_reserved,
                                     x_file_control,
                                     x_sector_size,
                                     x_device_characteristics,
                                     x_shm_map,
                                     x_shm_lock,
                                     x_shm_barrier,
                                     x_shm_unmap,
                                     x_fetch,
                                     x_unfetch};

int x_open(sqlite3_vfs*, sqlite3_filename name, sqlite3_file* file, int flags, int* out_flags) {
  FaultFile* ours = of(file);
  ours->base.pMethods = nullptr;
  const bool journal = flags & (SQLITE_OPEN_MAIN_JOURNAL | SQLITE_OPEN_WAL);
  if (journal && should_fail(Fault::open_journal)) return SQLITE_CANTOPEN;
  const int rc = g_real->xOpen(g_real, name, ours->real(), flags, out_flags);
  // SQLite calls xClose only when pMethods is set; the real file sets its own on success.
  if (ours->real()->pMethods != nullptr) ours->base.pMethods = &kMethods;
  return rc;
}

int x_delete(sqlite3_vfs*, const char* name, int sync_dir) {
  return g_real->xDelete(g_real, name, sync_dir);
}
int x_access(sqlite3_vfs*, const char* name, int flags, int* out) {
  return g_real->xAccess(g_real, name, flags, out);
}
int x_full_pathname(sqlite3_vfs*, const char* name, int n, char* out) {
  return g_real->xFullPathname(g_real, name, n, out);
}
void* x_dl_open(sqlite3_vfs*, const char* name) { return g_real->xDlOpen(g_real, name); }
void x_dl_error(sqlite3_vfs*, int n, char* out) { g_real->xDlError(g_real, n, out); }
void (*x_dl_sym(sqlite3_vfs*, void* handle, const char* symbol))(void) {
  return g_real->xDlSym(g_real, handle, symbol);
}
void x_dl_close(sqlite3_vfs*, void* handle) { g_real->xDlClose(g_real, handle); }
int x_randomness(sqlite3_vfs*, int n, char* out) { return g_real->xRandomness(g_real, n, out); }
int x_sleep(sqlite3_vfs*, int us) { return g_real->xSleep(g_real, us); }
int x_current_time(sqlite3_vfs*, double* out) { return g_real->xCurrentTime(g_real, out); }
int x_get_last_error(sqlite3_vfs*, int n, char* out) {
  return g_real->xGetLastError(g_real, n, out);
}
int x_current_time_int64(sqlite3_vfs*, sqlite3_int64* out) {
  return g_real->xCurrentTimeInt64(g_real, out);
}

}  // namespace

const char* to_string(Fault fault) {
  switch (fault) {
    case Fault::write:
      return "write";
    case Fault::sync:
      return "fsync";
    case Fault::read:
      return "read";
    case Fault::truncate:
      return "truncate";
    case Fault::open_journal:
      return "journal open";
  }
  return "?";
}

FaultVfs::FaultVfs() {
  g_real = sqlite3_vfs_find(nullptr);
  if (g_real == nullptr) throw std::runtime_error("no default SQLite VFS");
  g_vfs = sqlite3_vfs{};
  g_vfs.iVersion = 2;
  g_vfs.szOsFile = static_cast<int>(sizeof(FaultFile)) + g_real->szOsFile;
  g_vfs.mxPathname = g_real->mxPathname;
  g_vfs.zName = kName;
  g_vfs.xOpen = x_open;
  g_vfs.xDelete = x_delete;
  g_vfs.xAccess = x_access;
  g_vfs.xFullPathname = x_full_pathname;
  g_vfs.xDlOpen = x_dl_open;
  g_vfs.xDlError = x_dl_error;
  g_vfs.xDlSym = x_dl_sym;
  g_vfs.xDlClose = x_dl_close;
  g_vfs.xRandomness = x_randomness;
  g_vfs.xSleep = x_sleep;
  g_vfs.xCurrentTime = x_current_time;
  g_vfs.xGetLastError = x_get_last_error;
  g_vfs.xCurrentTimeInt64 = x_current_time_int64;
  if (sqlite3_vfs_register(&g_vfs, 0) != SQLITE_OK)
    throw std::runtime_error("cannot register the fault VFS");
}

FaultVfs::~FaultVfs() {
  sqlite3_vfs_unregister(&g_vfs);
  g_armed_kind = -1;
}

bool FaultVfs::fired() const { return g_fired_flag.load(); }

void FaultVfs::arm(Fault kind, int nth) {
  g_fired_flag = false;
  g_countdown = nth;
  g_armed_kind = nth > 0 ? static_cast<int>(kind) : -1;
}

}  // namespace sweep::test
