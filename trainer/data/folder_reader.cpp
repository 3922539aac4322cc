/*
 * folder_reader.cpp — listing a class-per-folder tree, decoding it on every core, the cache.
 */
#include "trainer/data/folder_reader.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <tbb/parallel_for.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string_view>

#include "common/check.h"
#include "trainer/data/decode_cache.h"
#include "trainer/data/image_decode.h"

namespace sweep::trainer {

namespace fs = std::filesystem;

namespace {

std::atomic<std::int64_t> g_decoded{0};

bool hidden(const fs::path& p) {
  const std::string name = p.filename().string();
  return !name.empty() && name[0] == '.';
}

bool is_image_name(std::string_view name) {
  const std::size_t dot = name.rfind('.');
  if (dot == std::string_view::npos || dot == 0) return false;
  std::string ext(name.substr(dot));
  for (char& c : ext) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return ext == ".png" || ext == ".jpg" || ext == ".jpeg" || ext == ".pgm" || ext == ".ppm";
}

void require_folder(const std::string& dir, const std::string& key) {
  std::error_code ec;
  const fs::file_status status = fs::status(dir, ec);
  if (!fs::exists(status))
    throw Error(key + " " + dir + ": no such folder (expected a folder holding one folder of " +
                "images per class)");
  if (!fs::is_directory(status))
    throw Error(key + " " + dir + ": not a folder (expected a folder holding one folder of " +
                "images per class)");
}

std::string size_text(int h, int w) { return std::to_string(h) + "x" + std::to_string(w); }

}  // namespace

std::vector<std::string> list_class_folders(const std::string& dir, const std::string& key) {
  require_folder(dir, key);
  std::vector<std::string> classes;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (hidden(it->path())) continue;
    std::error_code type_ec;
    if (it->is_directory(type_ec)) classes.push_back(it->path().filename().string());
  }
  if (ec) throw Error(key + " " + dir + ": cannot list the folder: " + ec.message());
  std::sort(classes.begin(), classes.end());
  if (classes.empty())
    throw Error(key + " " + dir + ": no class folders (expected one folder of images per class, " +
                "e.g. " + dir + "/cat/001.png)");
  if (classes.size() == 1)
    throw Error(key + " " + dir + ": only one class folder (" + classes[0] +
                "); a classifier needs at least two");
  if (classes.size() > 256)
    throw Error(key + " " + dir + ": " + std::to_string(classes.size()) +
                " class folders; sweep's labels hold at most 256 classes");
  return classes;
}

namespace {

// A directory stream closed on every way out.
struct DirCloser {
  void operator()(DIR* d) const { ::closedir(d); }
};

// Adds the image files below the open folder `fd` (whose path below the top folder is
// `relative`) to `files`, counting the others in `ignored`. POSIX readdir + fstatat, not
// std::filesystem: listing 60,000 files this way takes a third of the time, and a second load
// of a cached folder is mostly this listing. Links to folders are not followed (a link to an
// ancestor would never end); links to files are.
void walk(int fd, const std::string& relative, const std::string& shown, const std::string& key,
          int label, std::vector<FolderFile>& files, std::int64_t& ignored, int depth) {
  std::unique_ptr<DIR, DirCloser> dir(::fdopendir(fd));
  if (!dir) {
    ::close(fd);
    throw Error(key + " " + shown + ": cannot list the folder: " + std::strerror(errno));
  }
  if (depth > 64) throw Error(key + " " + shown + ": folders nested more than 64 deep");
  while (const dirent* entry = ::readdir(dir.get())) {
    const char* name = entry->d_name;
    if (name[0] == '.') continue;  // hidden, and . and ..
    const std::string path = relative + '/' + name;
    struct stat st {};
    if (entry->d_type == DT_DIR) {
      const int sub = ::openat(::dirfd(dir.get()), name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      if (sub == -1)
        throw Error(key + " " + shown + "/" + name +
                    ": cannot open the folder: " + std::strerror(errno));
      walk(sub, path, shown + "/" + name, key, label, files, ignored, depth + 1);
      continue;
    }
    if (entry->d_type != DT_REG && entry->d_type != DT_LNK && entry->d_type != DT_UNKNOWN) continue;
    const bool image = is_image_name(name);
    if (::fstatat(::dirfd(dir.get()), name, &st, 0) != 0) continue;  // a dangling link
    if (S_ISDIR(st.st_mode) && entry->d_type == DT_UNKNOWN) {
      const int sub =
          ::openat(::dirfd(dir.get()), name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
      if (sub != -1) walk(sub, path, shown + "/" + name, key, label, files, ignored, depth + 1);
      continue;
    }
    if (!S_ISREG(st.st_mode)) continue;
    if (!image) {
      ++ignored;
      continue;
    }
    files.push_back({path, label, std::int64_t(st.st_size),
                     std::int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec});
  }
}

// The image files below class folder `name` of `dir` (paths relative to `dir`, sorted).
std::vector<FolderFile> list_class(const std::string& dir, const std::string& key,
                                   const std::string& name, int label, std::int64_t& ignored) {
  const std::string shown = (fs::path(dir) / name).string();
  const int fd = ::open(shown.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd == -1)
    throw Error(key + " " + shown + ": cannot open the folder: " + std::strerror(errno));
  std::vector<FolderFile> files;
  walk(fd, name, shown, key, label, files, ignored, 0);
  std::sort(files.begin(), files.end(),
            [](const FolderFile& a, const FolderFile& b) { return a.relative < b.relative; });
  return files;
}

}  // namespace

std::string first_image_file(const std::string& dir, const std::string& class_name) {
  std::int64_t ignored = 0;
  const std::vector<FolderFile> files = list_class(dir, "data.path", class_name, 0, ignored);
  return files.empty() ? std::string() : (fs::path(dir) / files.front().relative).string();
}

FolderListing list_image_folder(const std::string& dir, const std::string& key) {
  FolderListing out;
  out.root = dir;
  out.class_names = list_class_folders(dir, key);
  // The class folders are listed (a stat per file) on every core, then joined in label order.
  const std::size_t classes = out.class_names.size();
  std::vector<std::vector<FolderFile>> per_class(classes);
  std::vector<std::int64_t> ignored(classes, 0);
  tbb::parallel_for(std::size_t(0), classes, [&](std::size_t label) {
    per_class[label] = list_class(dir, key, out.class_names[label], int(label), ignored[label]);
  });
  for (std::size_t label = 0; label < classes; ++label) {
    if (per_class[label].empty())
      throw Error(key + " " + dir + ": the class folder " + out.class_names[label] +
                  " holds no images (.png .jpg .jpeg .pgm .ppm)");
    out.files.insert(out.files.end(), per_class[label].begin(), per_class[label].end());
    out.ignored += ignored[label];
  }
  return out;
}

std::string folder_stamp(const std::string& dir) {
  try {
    const FolderListing listing = list_image_folder(dir, "data.path");
    std::string stamp;
    for (const FolderFile& f : listing.files)
      stamp += f.relative + ':' + std::to_string(f.size) + ':' + std::to_string(f.mtime_ns) + ';';
    return stamp;
  } catch (const Error&) {
    return {};
  }
}

std::int64_t folder_images_decoded() { return g_decoded.load(); }

namespace {

// Every file of `listing` decoded into one data set; bad files per spec.on_bad_file.
CachedFolder decode_folder(const FolderListing& listing, const std::string& key,
                           const FolderSpec& spec) {
  const std::size_t n = listing.files.size();
  std::vector<DecodedImage> images(n);
  std::vector<std::string> errors(n);
  const ImageDecodeSettings settings{spec.channels, spec.height, spec.width, spec.resize};
  tbb::parallel_for(std::size_t(0), n, [&](std::size_t i) {
    const std::string path = (fs::path(listing.root) / listing.files[i].relative).string();
    try {
      images[i] = decode_image_file(path, settings);
      g_decoded.fetch_add(1, std::memory_order_relaxed);
    } catch (const Error& e) {  // a bad file; anything else (out of memory) ends the load
      errors[i] = e.what();
      if (errors[i].empty()) errors[i] = path + ": cannot decode";
    }
  });

  CachedFolder out;
  out.skip_reasons.resize(n);
  std::size_t first_good = n;
  int channels = spec.channels;
  for (std::size_t i = 0; i < n; ++i) {
    if (!errors[i].empty()) {
      if (spec.on_bad_file == OnBadFile::error)
        throw Error(key + ": " + errors[i] + " (data.on_bad_file: skip leaves such files out)");
      out.skip_reasons[i] = errors[i];
      continue;
    }
    if (first_good == n) first_good = i;
    if (spec.channels == 0 && images[i].c == 3) channels = 3;
  }
  if (first_good == n) throw Error(key + " " + listing.root + ": no image could be decoded");
  if (channels == 0) channels = 1;
  const int h = images[first_good].h, w = images[first_good].w;
  std::int64_t kept = 0;
  std::vector<int> per_class(listing.class_names.size(), 0);
  for (std::size_t i = 0; i < n; ++i) {
    if (!errors[i].empty()) continue;
    if (images[i].h != h || images[i].w != w)
      throw Error(key + " " + listing.root + ": images of different sizes: " +
                  listing.files[first_good].relative + " is " + size_text(h, w) + ", " +
                  listing.files[i].relative + " is " + size_text(images[i].h, images[i].w) +
                  " (HxW); set data.image_size: [H, W] to bring every image to one size");
    ++kept;
    ++per_class[listing.files[i].label];
  }
  for (std::size_t label = 0; label < per_class.size(); ++label)
    if (per_class[label] == 0)
      throw Error(key + " " + listing.root + ": no image of the class folder " +
                  listing.class_names[label] + " could be decoded");

  Dataset& d = out.data;
  d.source = listing.root;
  d.c = channels;
  d.h = h;
  d.w = w;
  d.classes = int(listing.class_names.size());
  d.class_names = listing.class_names;
  const std::size_t plane = std::size_t(h) * w, sample = plane * channels;
  d.images.resize(sample * kept);
  d.labels.reserve(kept);
  std::size_t row = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (!errors[i].empty()) continue;
    std::uint8_t* dst = d.images.data() + row * sample;
    const std::vector<std::uint8_t>& src = images[i].pixels;
    if (images[i].c == channels)
      std::copy(src.begin(), src.end(), dst);
    else  // a grey file in a colour set: the grey plane in every channel
      for (int ch = 0; ch < channels; ++ch) std::copy(src.begin(), src.end(), dst + ch * plane);
    d.labels.push_back(static_cast<std::uint8_t>(listing.files[i].label));
    ++row;
  }
  return out;
}

void log_line(const std::string& line) { std::clog << "sweep: " << line << '\n'; }

// The one log line naming the skipped files (the first 10).
void log_skipped(const std::string& key, const FolderListing& listing,
                 const std::vector<std::string>& reasons) {
  std::vector<std::string> names;
  for (std::size_t i = 0; i < reasons.size(); ++i)
    if (!reasons[i].empty()) names.push_back(listing.files[i].relative);
  if (names.empty()) return;
  std::string line = key + " " + listing.root + ": skipped " + std::to_string(names.size()) +
                     " file(s) that could not be decoded (data.on_bad_file: skip): ";
  for (std::size_t i = 0; i < names.size() && i < 10; ++i) line += (i ? ", " : "") + names[i];
  if (names.size() > 10) line += ", ...";
  log_line(line);
}

}  // namespace

Dataset read_image_folder(const std::string& dir, const std::string& key, const FolderSpec& spec,
                          const std::vector<std::string>* expected_classes) {
  const FolderListing listing = list_image_folder(dir, key);
  if (expected_classes && *expected_classes != listing.class_names) {
    for (const std::string& c : *expected_classes)
      if (!std::binary_search(listing.class_names.begin(), listing.class_names.end(), c))
        throw Error(key + " " + dir + ": no class folder " + c +
                    " (expected the same class folders as data.path)");
    for (const std::string& c : listing.class_names)
      if (!std::binary_search(expected_classes->begin(), expected_classes->end(), c))
        throw Error(key + " " + dir + ": the class folder " + c +
                    " is not a class of data.path (expected the same class folders)");
  }
  if (listing.ignored > 0)
    log_line(key + " " + dir + ": ignored " + std::to_string(listing.ignored) +
             " file(s) whose names are not images (.png .jpg .jpeg .pgm .ppm)");
  const fs::path cache = folder_cache_path(listing, spec);
  if (!cache.empty())
    if (std::optional<CachedFolder> cached = read_folder_cache(cache, listing, spec)) {
      log_skipped(key, listing, cached->skip_reasons);
      return std::move(cached->data);
    }
  CachedFolder decoded = decode_folder(listing, key, spec);
  log_skipped(key, listing, decoded.skip_reasons);
  if (!cache.empty()) {
    try {
      write_folder_cache(cache, listing, spec, decoded);
    } catch (const std::exception& e) {  // the data set is decoded: only later loads are slower
      log_line(std::string("cannot keep the decoded images: ") + e.what());
    }
  }
  return std::move(decoded.data);
}

}  // namespace sweep::trainer
