/*
 * decode_cache_test.cpp — a folder data set's decoded tensor kept on disk (trainer/data/
 * decode_cache.h): a second load decodes nothing, a changed file or other settings decode again,
 * and a damaged or foreign cache file is ignored, never trusted.
 */
#include "trainer/data/decode_cache.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "image_files.h"

namespace sweep::trainer {
namespace {

using namespace test_images;
namespace fs = std::filesystem;

struct Folder {
  TempDir dir;
  FolderSpec spec;
  std::string root;
  Folder() {
    spec.cache_dir = (dir.path() / "cache").string();
    root = (dir.path() / "set").string();
    for (int i = 0; i < 6; ++i) {
      write_png(dir.file("set/a/" + std::to_string(i) + ".png"), 3, 4, 1, pattern(3, 4, 1, i));
      write_bytes(dir.file("set/b/" + std::to_string(i) + ".ppm"),
                  pnm_bytes(3, 4, 3, pattern(3, 4, 3, 50 + i)));
    }
  }
  Dataset load() const { return read_image_folder(root, "data.path", spec); }
  fs::path cache_file() const {
    return folder_cache_path(list_image_folder(root, "data.path"), spec);
  }
};

void expect_same(const Dataset& a, const Dataset& b) {
  EXPECT_EQ(a.images, b.images);
  EXPECT_EQ(a.labels, b.labels);
  EXPECT_EQ(a.class_names, b.class_names);
  EXPECT_EQ(a.c, b.c);
  EXPECT_EQ(a.h, b.h);
  EXPECT_EQ(a.w, b.w);
  EXPECT_EQ(a.classes, b.classes);
}

TEST(DecodeCache, ASecondLoadDecodesNothing) {
  Folder f;
  const std::int64_t before = folder_images_decoded();
  const Dataset first = f.load();
  EXPECT_EQ(folder_images_decoded() - before, 12);
  EXPECT_TRUE(fs::is_regular_file(f.cache_file()));
  EXPECT_EQ(f.cache_file().parent_path(), fs::path(f.spec.cache_dir));
  const Dataset second = f.load();
  EXPECT_EQ(folder_images_decoded() - before, 12);
  expect_same(first, second);
  EXPECT_EQ(second.c, 3);
  EXPECT_EQ(second.size(), 12);
}

TEST(DecodeCache, AChangedFileIsNoticedAndDecodedAgain) {
  Folder f;
  const Dataset first = f.load();
  const std::int64_t before = folder_images_decoded();
  const std::string changed = f.dir.file("set/a/0.png");
  write_png(changed, 3, 4, 1, pattern(3, 4, 1, 99));
  fs::last_write_time(changed, fs::last_write_time(changed) + std::chrono::seconds(5));
  const Dataset second = f.load();
  EXPECT_EQ(folder_images_decoded() - before, 12);
  EXPECT_NE(first.images, second.images);
  EXPECT_EQ(second.images[0], 99);
  // A file added is a change too.
  write_bytes(f.dir.file("set/b/9.ppm"), pnm_bytes(3, 4, 3, pattern(3, 4, 3)));
  EXPECT_EQ(f.load().size(), 13);
}

TEST(DecodeCache, OtherSettingsAreAnotherCacheFile) {
  Folder f;
  f.load();
  const fs::path colour = f.cache_file();
  f.spec.channels = 1;
  const std::int64_t before = folder_images_decoded();
  const Dataset grey = f.load();
  EXPECT_EQ(grey.c, 1);
  EXPECT_EQ(folder_images_decoded() - before, 12);
  EXPECT_NE(f.cache_file(), colour);
  EXPECT_TRUE(fs::is_regular_file(colour));
}

TEST(DecodeCache, ADamagedOrTruncatedCacheFileIsIgnored) {
  Folder f;
  const Dataset first = f.load();
  const fs::path cache = f.cache_file();
  std::vector<std::uint8_t> bytes = read_bytes(cache.string());
  for (const std::size_t at : {std::size_t(30), bytes.size() / 2, bytes.size() - 1}) {
    std::vector<std::uint8_t> damaged = bytes;
    damaged[at] ^= 0x40;
    write_bytes(cache.string(), damaged);
    const std::int64_t before = folder_images_decoded();
    expect_same(f.load(), first);
    EXPECT_EQ(folder_images_decoded() - before, 12) << "byte " << at;
  }
  write_bytes(cache.string(), std::vector<std::uint8_t>(bytes.begin(), bytes.begin() + 100));
  const std::int64_t before = folder_images_decoded();
  expect_same(f.load(), first);
  EXPECT_EQ(folder_images_decoded() - before, 12);
  // ... and each time written again whole: the next load decodes nothing.
  f.load();
  EXPECT_EQ(folder_images_decoded() - before, 12);
}

TEST(DecodeCache, AFileOfAnotherListingIsNotUsed) {
  Folder f;
  f.load();
  const FolderListing listing = list_image_folder(f.root, "data.path");
  FolderListing other = listing;
  other.files[3].size += 1;
  EXPECT_FALSE(read_folder_cache(f.cache_file(), other, f.spec));
  EXPECT_TRUE(read_folder_cache(f.cache_file(), listing, f.spec));
  FolderSpec resized = f.spec;
  resized.height = resized.width = 2;
  EXPECT_FALSE(read_folder_cache(f.cache_file(), listing, resized));
}

TEST(DecodeCache, TheCacheIsNotWrittenThroughASymbolicLink) {
  Folder f;
  const fs::path cache = f.cache_file();
  fs::create_directories(cache.parent_path());
  const std::string target = f.dir.file("elsewhere");
  write_bytes(target, {1, 2, 3});
  fs::create_symlink(target, cache);
  f.load();  // writes a temporary of its own and renames it over the link
  EXPECT_EQ(read_bytes(target), (std::vector<std::uint8_t>{1, 2, 3}));
  EXPECT_FALSE(fs::is_symlink(cache));
}

}  // namespace
}  // namespace sweep::trainer
