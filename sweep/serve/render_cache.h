/*
 * render_cache.h — texts `sweep serve` sends (a report page, a sweep's JSON), each made once per
 * version of what it is made from and shared by every request that asks for that version.
 *
 * The non-obvious decisions:
 *  - Making a report reads every metric point of the sweep: ten pages each reading it for
 *    themselves would hold ten copies of a million points. So one request makes the text, the
 *    others asking for the same key and version wait for it and share it, and each answers from
 *    the shared text (no copy per request).
 *  - At most `max_concurrent` texts are being made at once over all keys, which bounds the memory
 *    of reads whatever the number of requests and sweeps.
 *  - One text is kept per key (the newest made), least recently used ones are dropped once the
 *    kept texts pass `max_bytes`; a text still being sent stays alive with its requests.
 *  - Nothing is kept when making fails (the exception reaches the caller) or gives nothing.
 *
 * Thread safety: every member may be called from any thread.
 *
 *   RenderCache cache({.max_bytes = 64 << 20, .max_concurrent = 2});
 *   RenderCache::Text page = cache.get("page:" + db, marker, [&] { return render(db); });
 */
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

namespace sweep::serve {

class RenderCache {
 public:
  struct Limits {
    std::size_t max_bytes = 0;
    std::size_t max_concurrent = 1;
  };
  using Text = std::shared_ptr<const std::string>;
  using Render = std::function<std::optional<std::string>()>;

  explicit RenderCache(Limits limits);

  // The text of `key` at `version`: the kept one, else the one another request is making for
  // it, else made by `render` here (nullptr when it gives nothing). Throws what `render` throws.
  Text get(const std::string& key, const std::string& version, const Render& render);

  std::uint64_t renders() const;  // how many times a render ran
  std::size_t kept_bytes() const;

 private:
  struct Entry {
    std::string version;
    Text text;
    std::uint64_t last_use = 0;
    bool rendering = false;
  };
  void keep(const std::string& key, Entry& entry, std::string version, std::string text);

  const Limits limits_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::unordered_map<std::string, Entry> entries_;
  std::size_t kept_bytes_ = 0;
  std::size_t rendering_ = 0;
  std::uint64_t uses_ = 0;
  std::uint64_t renders_ = 0;
};

}  // namespace sweep::serve
