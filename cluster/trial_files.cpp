/*
 * trial_files.cpp — plain std::filesystem and streams; fsync is the store's business, the file's
 * rename is what keeps a checkpoint whole. Both ends keep to the rule of common/own_file.h: a
 * symbolic link in a trial's directory is neither sent as the trial's file nor written through
 * (the temporary is opened without following one; the rename replaces a link, never its target).
 */
#include "cluster/trial_files.h"

#include <fstream>
#include <iterator>
#include <sstream>

#include "common/check.h"
#include "common/own_file_stream.h"

namespace sweep::cluster {

namespace fs = std::filesystem;

TrialFile read_trial_file(const fs::path& dir, const std::string& name) {
  std::ifstream in(dir / name, std::ios::binary);
  if (!in) throw Error("cannot read " + (dir / name).string());
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return {name, bytes.str()};
}

std::vector<TrialFile> read_trial_files(const fs::path& dir) {
  std::vector<TrialFile> files;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return files;
  for (const auto& entry : fs::recursive_directory_iterator(dir))
    if (entry.is_regular_file() && !entry.is_symlink())
      files.push_back(read_trial_file(dir, fs::relative(entry.path(), dir).generic_string()));
  return files;
}

void write_trial_file(const fs::path& dir, const TrialFile& file) {
  const fs::path name(file.name);
  bool escapes = name.empty() || name.is_absolute();
  for (const auto& part : name) escapes = escapes || part == "..";
  if (escapes) throw Error("cluster: refused a trial file named '" + file.name + "'");
  const fs::path target = dir / name;
  fs::create_directories(target.parent_path());
  const fs::path temporary = target.string() + ".incoming";
  {
    const int fd = open_own_file(temporary, O_WRONLY | O_CREAT | O_TRUNC);
    if (fd == -1) throw Error("cannot write " + temporary.string() + ": " + std::strerror(errno));
    OwnFileBuf out(fd);
    const auto size = static_cast<std::streamsize>(file.bytes.size());
    if (out.sputn(file.bytes.data(), size) != size || out.pubsync() != 0)
      throw Error("cannot write " + temporary.string() + " (is the disk full?)");
  }
  fs::rename(temporary, target);
}

}  // namespace sweep::cluster
