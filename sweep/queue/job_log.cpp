/*
 * job_log.cpp — see job_log.h.
 */
#include "sweep/queue/job_log.h"

#include <fstream>
#include <iterator>

#include "sweep/queue/job_attempts.h"

namespace sweep::queue {

namespace {

constexpr std::string_view kMark = "== ";
constexpr std::string_view kOnWorker = ", on worker ";

std::string job_words(std::int64_t job_id) { return "job " + std::to_string(job_id); }

}  // namespace

std::string attempt_opening(const JobRow& job, std::string_view owner, std::string_view time) {
  return std::string(kMark) + std::string(time) + ": " + job_words(job.id) + ", " +
         attempt_text(job) + std::string(kOnWorker) + std::string(owner);
}

std::string attempt_closing(std::int64_t job_id, std::string_view rest, std::string_view time) {
  return std::string(kMark) + (time.empty() ? std::string() : std::string(time) + ": ") +
         job_words(job_id) + std::string(rest);
}

AttemptMark attempt_mark(std::string_view line, std::int64_t job_id) {
  if (!line.starts_with(kMark)) return AttemptMark::none;
  std::string_view rest = line.substr(kMark.size());
  const std::string job = job_words(job_id);
  if (!rest.starts_with(job)) {  // "TIME: job N": the time has no "job " in it
    const std::size_t at = rest.find(": " + job);
    if (at == std::string_view::npos) return AttemptMark::none;
    rest = rest.substr(at + 2);
  }
  rest = rest.substr(job.size());
  if (rest.starts_with(",")) return AttemptMark::opens;
  if (rest.starts_with(" ") || rest.starts_with(":")) return AttemptMark::closes;
  return AttemptMark::none;  // "job 12" read for job 1
}

std::string attempt_owner(std::string_view opening) {
  const std::size_t at = opening.rfind(kOnWorker);
  return at == std::string_view::npos ? std::string()
                                      : std::string(opening.substr(at + kOnWorker.size()));
}

JobLogTail::JobLogTail(std::filesystem::path path, std::int64_t job_id)
    : path_(std::move(path)), job_id_(job_id) {}

std::string JobLogTail::read_new() {
  std::ifstream in(path_, std::ios::binary);
  if (!in) return "";
  in.seekg(static_cast<std::streamoff>(offset_));
  std::string chunk((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  offset_ += chunk.size();
  partial_line_ += chunk;
  std::size_t start = 0;
  for (std::size_t end; (end = partial_line_.find('\n', start)) != std::string::npos;
       start = end + 1) {
    const std::string_view line(partial_line_.data() + start, end - start);
    switch (attempt_mark(line, job_id_)) {
      case AttemptMark::opens:
        open_ = true;
        owner_ = attempt_owner(line);
        break;
      case AttemptMark::closes:
        open_ = false;
        owner_.clear();
        break;
      case AttemptMark::none:
        break;
    }
  }
  partial_line_.erase(0, start);
  return chunk;
}

}  // namespace sweep::queue
