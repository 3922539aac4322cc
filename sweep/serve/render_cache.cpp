/*
 * render_cache.cpp — shared, bounded texts per key and version (render_cache.h).
 */
#include "sweep/serve/render_cache.h"

#include <algorithm>
#include <exception>
#include <utility>

namespace sweep::serve {

RenderCache::RenderCache(Limits limits) : limits_(limits) {}

RenderCache::Text RenderCache::get(const std::string& key, const std::string& version,
                                   const Render& render) {
  std::unique_lock lock(mutex_);
  // Looked up again after each wait: an entry nobody is making may be dropped meanwhile. One
  // being made is never dropped, so `entry` stays valid from here on (unordered_map keeps
  // references to its elements while others are added).
  Entry* found = &entries_[key];
  while (found->rendering) {
    changed_.wait(lock);
    found = &entries_[key];
  }
  Entry& entry = *found;
  if (entry.text && entry.version == version) {
    entry.last_use = ++uses_;
    return entry.text;
  }
  entry.rendering = true;
  changed_.wait(lock,
                [&] { return rendering_ < std::max<std::size_t>(limits_.max_concurrent, 1); });
  ++rendering_;
  ++renders_;
  lock.unlock();

  std::optional<std::string> text;
  std::exception_ptr error;
  try {
    text = render();
  } catch (...) {
    error = std::current_exception();
  }

  lock.lock();
  --rendering_;
  entry.rendering = false;
  Text made;
  if (!error && text) {
    keep(key, entry, version, std::move(*text));
    made = entry.text;
  }
  lock.unlock();
  changed_.notify_all();
  if (error) std::rethrow_exception(error);
  return made;
}

void RenderCache::keep(const std::string& key, Entry& entry, std::string version,
                       std::string text) {
  if (entry.text) kept_bytes_ -= entry.text->size();
  entry.text = std::make_shared<const std::string>(std::move(text));
  entry.version = std::move(version);
  entry.last_use = ++uses_;
  kept_bytes_ += entry.text->size();
  // Least recently used first, never the one just made nor one being made.
  while (kept_bytes_ > limits_.max_bytes) {
    auto oldest = entries_.end();
    for (auto it = entries_.begin(); it != entries_.end(); ++it) {
      if (it->first == key || it->second.rendering || !it->second.text) continue;
      if (oldest == entries_.end() || it->second.last_use < oldest->second.last_use) oldest = it;
    }
    if (oldest == entries_.end()) break;
    kept_bytes_ -= oldest->second.text->size();
    entries_.erase(oldest);
  }
}

std::uint64_t RenderCache::renders() const {
  const std::lock_guard lock(mutex_);
  return renders_;
}

std::size_t RenderCache::kept_bytes() const {
  const std::lock_guard lock(mutex_);
  return kept_bytes_;
}

}  // namespace sweep::serve
