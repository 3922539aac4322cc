/*
 * sweep_layout.h — what a sweep's directory holds, in one place:
 *
 *   OUT/NAME/sweep.db                  the store (unless --db puts it elsewhere)
 *   OUT/NAME/.lock                     held by the process training the sweep (sweep_lock.h)
 *   OUT/NAME/report.html               the report
 *   OUT/NAME/trials/NNN/log.txt        a trial's log (NNN: its number, at least 3 digits)
 *   OUT/NAME/trials/NNN/checkpoint.bin a built-in trial's checkpoint
 *   OUT/NAME/trials/NNN/model.sweepmodel a built-in trial's trained network, written when it ends
 *                                      (trainer/model_file.h; found by its place, not stored)
 *
 * Paths stored in the database are relative to OUT/NAME, so a sweep's directory can be copied
 * or moved and continued where it is.
 */
#pragma once

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>

namespace sweep::run {

inline std::filesystem::path sweep_dir(const std::filesystem::path& out_dir,
                                       const std::string& name) {
  return out_dir / name;
}
inline std::filesystem::path database_in(const std::filesystem::path& sweep_dir) {
  return sweep_dir / "sweep.db";
}
inline std::filesystem::path report_in(const std::filesystem::path& sweep_dir) {
  return sweep_dir / "report.html";
}
inline std::filesystem::path trial_dir_in(const std::filesystem::path& sweep_dir,
                                          std::int64_t number) {
  char text[32];
  std::snprintf(text, sizeof text, "%03lld", static_cast<long long>(number));
  return sweep_dir / "trials" / text;
}
inline std::filesystem::path log_in(const std::filesystem::path& trial_dir) {
  return trial_dir / "log.txt";
}
inline std::filesystem::path checkpoint_in(const std::filesystem::path& trial_dir) {
  return trial_dir / "checkpoint.bin";
}
inline std::filesystem::path model_in(const std::filesystem::path& trial_dir) {
  return trial_dir / "model.sweepmodel";  // trainer::kModelFileName
}

}  // namespace sweep::run
