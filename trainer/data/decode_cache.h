/*
 * decode_cache.h — a folder data set's decoded tensor kept on disk, so a later load of the same
 * files with the same settings reads one file instead of decoding every image.
 *
 * Where: data.cache_dir, else $SWEEP_HOME/cache/folders (common/sweep_home.h); none when neither
 * is known. One file per top folder and settings: folder-<hash of the folder's absolute path and
 * the settings>.sweepimg, replaced whenever the files change. Format (host byte order, written
 * once and read back on the same kind of machine):
 *   "SWEEPIMG", u32 version, u64 hash of the listing (every file's path, size, mtime in ns)
 *   i32 channels, height, width, resize, on_bad_file (the settings asked for)
 *   i32 C, H, W, classes; i64 N
 *   u32 class count, each name (u32 length + bytes)
 *   u64 file count, each: path (u32 + bytes), i64 size, i64 mtime_ns, i32 label, reason it was
 *       skipped (u32 + bytes; empty when used)
 *   N label bytes, N*C*H*W image bytes, u32 CRC-32 (zlib's) of everything before it.
 * A file is used only when all of it checks: magic, version, the settings, every listed file
 * equal to the folder's own listing now, sizes that add up to the file's size, the CRC. Anything
 * else (a stale, truncated or foreign file) is ignored and the folder decoded again: the cache is
 * never trusted over the images. Written to a temporary of our own (common/own_file.h, never
 * through a symbolic link) and renamed into place, so a reader sees a whole file or none.
 */
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "trainer/data/dataset.h"
#include "trainer/data/folder_reader.h"
#include "trainer/train_config.h"

namespace sweep::trainer {

struct CachedFolder {
  Dataset data;
  // Per file of the listing, in its order: why it was left out (on_bad_file: skip), or empty.
  std::vector<std::string> skip_reasons;
};

// The cache file for `listing` under `spec` (empty when there is no cache directory).
std::filesystem::path folder_cache_path(const FolderListing& listing, const FolderSpec& spec);

// The cached data set when `path` holds one for exactly this listing and settings, else nothing.
std::optional<CachedFolder> read_folder_cache(const std::filesystem::path& path,
                                              const FolderListing& listing, const FolderSpec& spec);

// Writes the cache file atomically. Throws sweep::Error naming the file when it cannot.
void write_folder_cache(const std::filesystem::path& path, const FolderListing& listing,
                        const FolderSpec& spec, const CachedFolder& cached);

}  // namespace sweep::trainer
