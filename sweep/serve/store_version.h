/*
 * store_version.h — "has this sweep changed?" without opening it: the store's last-change
 * marker, from a stat() of sweep.db and of its -wal file.
 *
 * The non-obvious decisions:
 *  - Every commit of the sweep's writer appends to the -wal file (WAL mode) and a checkpoint
 *    writes sweep.db, so their sizes and modification times change with every write; our own
 *    read-only connections write neither (beside a finished sweep they leave an empty -wal,
 *    which counts as none). Two stat() calls are cheap enough to ask every 200 ms per waiting
 *    browser, where opening the store and reading a report would not be.
 *  - A file's time has the kernel's coarse granularity (a few ms), and a -wal file rewritten from
 *    its start after a checkpoint can keep its size: two commits within one tick could leave the
 *    marker unchanged. So a marker whose newest write is less than a second old is not
 *    `settled`, and issued_token() never hands it out as is: a client that holds it asks again
 *    and gets the data again, until the files have been quiet for a second.
 *
 * Thread safety: free functions; issued_token() uses an atomic counter.
 */
#pragma once

#include <filesystem>
#include <string>

namespace sweep::serve {

struct StoreVersion {
  std::string marker;      // sizes, times and inode of sweep.db and sweep.db-wal; "" = no file
  double last_change = 0;  // UTC seconds of the newest write to either file
  bool settled = false;    // the newest write is at least a second old
};

StoreVersion store_version(const std::filesystem::path& db);

// The version to give a client: the marker when settled, else one that matches nothing later.
std::string issued_token(const StoreVersion& version);

}  // namespace sweep::serve
