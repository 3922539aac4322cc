// Texts made once per version and shared (render_cache.h): however many ask at once one render
// runs, a new version renders again, renders over all keys are bounded, and the kept texts stay
// under their budget.
#include "sweep/serve/render_cache.h"

#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <latch>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace sweep::serve {
namespace {

// A render that holds until `release` opens, so that every asker is waiting on it at once.
struct GatedRender {
  std::atomic<int> runs{0}, running{0}, most_running{0};
  std::promise<void> release;
  std::shared_future<void> open = release.get_future().share();

  std::optional<std::string> operator()(const std::string& text) {
    ++runs;
    const int now = ++running;
    for (int seen = most_running; now > seen && !most_running.compare_exchange_weak(seen, now);) {
    }
    open.wait();
    --running;
    return text;
  }
};

TEST(RenderCache, OneRenderPerVersionHoweverManyAskAtOnce) {
  RenderCache cache({.max_bytes = 1 << 20, .max_concurrent = 2});
  GatedRender render;
  std::latch asked(10);
  std::vector<std::future<RenderCache::Text>> texts;
  for (int i = 0; i < 10; ++i)
    texts.push_back(std::async(std::launch::async, [&] {
      asked.count_down();
      return cache.get("api:a", "v1", [&] { return render("the report"); });
    }));
  asked.wait();
  render.release.set_value();
  std::vector<RenderCache::Text> got;
  for (auto& t : texts) got.push_back(t.get());
  EXPECT_EQ(render.runs, 1);
  EXPECT_EQ(cache.renders(), 1u);
  for (const RenderCache::Text& text : got) {
    ASSERT_TRUE(text);
    EXPECT_EQ(text.get(), got.front().get()) << "one shared copy";
    EXPECT_EQ(*text, "the report");
  }
}

TEST(RenderCache, ANewVersionRendersAgainAndTheKeyKeepsOneText) {
  RenderCache cache({.max_bytes = 1 << 20, .max_concurrent = 1});
  int runs = 0;
  const auto make = [&](std::string text) {
    return [&runs, text] {
      ++runs;
      return std::optional<std::string>(text);
    };
  };
  EXPECT_EQ(*cache.get("k", "v1", make("one")), "one");
  EXPECT_EQ(*cache.get("k", "v1", make("ignored")), "one");
  EXPECT_EQ(*cache.get("k", "v2", make("two")), "two");
  EXPECT_EQ(runs, 2);
  EXPECT_EQ(cache.kept_bytes(), 3u);
  // Nothing made: nothing kept, asked again next time.
  EXPECT_EQ(cache.get("none", "v1", [] { return std::optional<std::string>(); }), nullptr);
  EXPECT_EQ(*cache.get("none", "v1", make("now")), "now");
}

TEST(RenderCache, AtMostMaxConcurrentRendersRunAtOnceOverAllKeys) {
  RenderCache cache({.max_bytes = 1 << 20, .max_concurrent = 2});
  GatedRender render;
  std::vector<std::future<RenderCache::Text>> texts;
  for (int i = 0; i < 8; ++i)
    texts.push_back(std::async(std::launch::async, [&, i] {
      return cache.get("sweep" + std::to_string(i), "v1", [&] { return render("r"); });
    }));
  // Two renders start and hold; the six others wait for a turn however long they wait.
  while (render.running < 2) std::this_thread::yield();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_EQ(render.running, 2);
  render.release.set_value();
  for (auto& t : texts) EXPECT_TRUE(t.get());
  EXPECT_EQ(render.runs, 8);
  EXPECT_EQ(render.most_running, 2);
}

TEST(RenderCache, KeptTextsStayUnderTheBudgetLeastRecentlyUsedFirst) {
  RenderCache cache({.max_bytes = 25, .max_concurrent = 1});
  const auto text = [](char c) { return [c] { return std::optional(std::string(10, c)); }; };
  const RenderCache::Text a = cache.get("a", "v", text('a'));
  cache.get("b", "v", text('b'));
  cache.get("a", "v", text('x'));  // a used again: b is now the oldest
  cache.get("c", "v", text('c'));  // 30 bytes kept: b goes
  EXPECT_EQ(cache.kept_bytes(), 20u);
  EXPECT_EQ(*cache.get("a", "v", text('x')), std::string(10, 'a'));
  EXPECT_EQ(*cache.get("b", "v", text('B')), std::string(10, 'B')) << "b was dropped";
  EXPECT_EQ(*a, std::string(10, 'a')) << "a text in use stays alive";
  EXPECT_LE(cache.kept_bytes(), 25u);
}

TEST(RenderCache, AFailedRenderKeepsNothingAndReachesEveryCaller) {
  RenderCache cache({.max_bytes = 1 << 20, .max_concurrent = 1});
  EXPECT_THROW(cache.get("k", "v",
                         []() -> std::optional<std::string> {
                           throw std::runtime_error("not a SQLite database");
                         }),
               std::runtime_error);
  EXPECT_EQ(cache.kept_bytes(), 0u);
  EXPECT_EQ(*cache.get("k", "v", [] { return std::optional<std::string>("ok"); }), "ok");
}

}  // namespace
}  // namespace sweep::serve
