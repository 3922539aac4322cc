// parfor / fetch_next / after_each: order by spec for parfor, by completion for the others.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <set>
#include <thread>

#include "test_helpers.h"

namespace sweep::scheduler {
namespace {

// Three trials on three slots, each held until its gate opens; gates are opened in `order`,
// each only after the previous trial has completed, so the completion order is exactly `order`.
struct ThreeGatedTrials {
  std::array<Gate, 3> gates;  // before the executor: they must outlive its threads
  Executor executor{cpu_options(3)};
  std::vector<TrialFuture> futures;

  ThreeGatedTrials() {
    for (int i = 0; i < 3; ++i)
      futures.push_back(executor.submit(spec_with_id(i + 1), [this, i](TrialContext&) {
        EXPECT_TRUE(gates[i].wait());
        return completed({{"index", i}});
      }));
  }
  void finish(int i) {
    gates[i].open();
    futures[i].wait();
  }
};

TEST(Futures, ParforReturnsOutcomesInSpecOrder) {
  Executor executor(cpu_options(2));
  std::vector<TrialSpec> specs;
  for (int i = 0; i < 12; ++i) specs.push_back(spec_with_id(i + 1, {{"i", i}}));
  auto outcomes = parfor(executor, specs, [](TrialContext& ctx) {
    const int i = ctx.spec().params.at("i");
    std::this_thread::sleep_for(
        std::chrono::microseconds((12 - i) * 200));  // later ones finish first
    return completed({{"i", i}});
  });
  ASSERT_EQ(outcomes.size(), 12u);
  for (int i = 0; i < 12; ++i) EXPECT_EQ(outcomes[i].summary.at("i"), i);
}

TEST(Futures, FetchNextReturnsInCompletionOrderAndEachOnce) {
  ThreeGatedTrials trials;
  EXPECT_EQ(fetch_next(trials.futures, 10ms), std::nullopt);  // nothing finished yet
  trials.finish(2);
  trials.finish(0);
  trials.finish(1);
  EXPECT_EQ(fetch_next(trials.futures), 2u);
  EXPECT_EQ(fetch_next(trials.futures), 0u);
  EXPECT_TRUE(trials.futures[0].fetched());
  EXPECT_FALSE(trials.futures[1].fetched());
  EXPECT_EQ(fetch_next(trials.futures), 1u);
  EXPECT_EQ(fetch_next(trials.futures), std::nullopt);  // all fetched: the loop ends
  trials.futures[0].set_fetched(false);
  EXPECT_EQ(fetch_next(trials.futures), 0u);
}

TEST(Futures, FetchNextWaitsForTheNextCompletion) {
  ThreeGatedTrials trials;
  std::thread opener([&] {
    std::this_thread::sleep_for(20ms);
    trials.gates[1].open();
  });
  EXPECT_EQ(fetch_next(trials.futures, 20s), 1u);
  opener.join();
  trials.finish(0);
  trials.finish(2);
}

TEST(Futures, ConcurrentFetchersNeverGetTheSameFuture) {
  Executor executor(cpu_options(2));
  std::vector<TrialFuture> futures;
  for (int i = 0; i < 200; ++i)
    futures.push_back(
        executor.submit(spec_with_id(i + 1), [](TrialContext&) { return completed(); }));
  std::vector<std::size_t> got_a, got_b;
  auto fetch_all = [&](std::vector<std::size_t>& got) {
    while (auto index = fetch_next(futures)) got.push_back(*index);
  };
  std::thread a(fetch_all, std::ref(got_a)), b(fetch_all, std::ref(got_b));
  a.join();
  b.join();
  std::set<std::size_t> all(got_a.begin(), got_a.end());
  all.insert(got_b.begin(), got_b.end());
  EXPECT_EQ(all.size(), 200u);
  EXPECT_EQ(got_a.size() + got_b.size(), 200u);
}

TEST(Futures, AfterEachCallsBackInCompletionOrder) {
  ThreeGatedTrials trials;
  std::thread opener([&] {
    trials.finish(1);
    trials.finish(2);
    trials.finish(0);
  });
  std::vector<std::size_t> order;
  std::vector<int> summaries;
  after_each(trials.futures, [&](std::size_t index, const TrialOutcome& outcome) {
    order.push_back(index);
    summaries.push_back(outcome.summary.at("index"));
  });
  opener.join();
  EXPECT_EQ(order, (std::vector<std::size_t>{1, 2, 0}));
  EXPECT_EQ(summaries, (std::vector<int>{1, 2, 0}));
  EXPECT_FALSE(trials.futures[0].fetched());  // after_each leaves the marks alone
}

}  // namespace
}  // namespace sweep::scheduler
