/*
 * folder_reader.h — `dataset: folder`: a folder of images, one subfolder per class.
 *
 * The convention of PyTorch's ImageFolder and MATLAB's imageDatastore (LabelSource
 * "foldernames"): DIR/cat/001.png, DIR/dog/x/002.jpg, ... Classes are the non-hidden subfolders
 * of DIR in byte order of their names (label 0 is the first); each class's images are every file
 * below its folder (nested folders too) whose extension is .png .jpg .jpeg .pgm .ppm (any case),
 * in byte order of their paths; the format itself is told by the file's first bytes. Hidden
 * files and folders (a leading '.') are ignored; other files (README.txt) are counted and the
 * count is logged. Refused, each with one message naming the folder or file: a missing path, no
 * class folders, one class only, a class folder without images, an image over 256 MiB, a header
 * claiming an absurd size, images of different sizes without data.image_size (naming two), and
 * with on_bad_file: error (the default) a file that does not decode (naming it and the decoder's
 * reason). With on_bad_file: skip those files are left out and named (the first 10) in one log
 * line.
 *
 * Decoding runs on every core (oneTBB), once per data set and settings: the result is kept in a
 * cache file (decode_cache.h) that a later load uses after checking every file's size and
 * modification time, so a second load of the same folder only lists it and reads one file.
 */
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "trainer/data/dataset.h"
#include "trainer/train_config.h"

namespace sweep::trainer {

// One image file of a listing.
struct FolderFile {
  std::string relative;  // path below the top folder ("cat/001.png")
  int label = 0;
  std::int64_t size = 0;
  std::int64_t mtime_ns = 0;
  bool operator==(const FolderFile&) const = default;
};

struct FolderListing {
  std::string root;                      // the top folder as given
  std::vector<std::string> class_names;  // sorted
  std::vector<FolderFile> files;         // by class, then by path
  std::int64_t ignored = 0;              // files that are not images by their extension
};

// The classes and image files below `dir` (`key` names the config key in messages: "data.path").
// Throws sweep::Error for a missing folder, no class folders, one class, an empty class folder.
FolderListing list_image_folder(const std::string& dir, const std::string& key);

// The class folders of `dir` alone (sorted), for a config check that reads no image.
std::vector<std::string> list_class_folders(const std::string& dir, const std::string& key);

// The first image file of `class_name` below `dir` (in the listing's order), or "" when it has
// none.
std::string first_image_file(const std::string& dir, const std::string& class_name);

// The whole data set under `dir`, decoded by `spec`'s settings (or read from the cache).
// `expected_classes`, when not null, must be the folder's classes (validation_path's check).
Dataset read_image_folder(const std::string& dir, const std::string& key, const FolderSpec& spec,
                          const std::vector<std::string>* expected_classes = nullptr);

// The names, sizes and modification times of every image file below `dir` ("" when it cannot be
// listed): what the per-process cache of load_data.cpp compares.
std::string folder_stamp(const std::string& dir);

// Images decoded by read_image_folder in this process (not read from a cache): for tests.
std::int64_t folder_images_decoded();

}  // namespace sweep::trainer
