/*
 * futures.h — helpers over many TrialFutures: MATLAB's parfor / fetchNext / afterEach.
 *
 * fetch_next marks what it returns as fetched *in the futures' shared state* (MATLAB's Read
 * property), so the loop `while (auto i = fetch_next(futures))` visits every trial once, in the
 * order they finished, whoever else holds copies of the futures.
 *
 *   std::vector<TrialOutcome> outcomes = parfor(executor, specs, trial_fn);  // in spec order
 *   after_each(futures, [](std::size_t i, const TrialOutcome& o) { print(i, o); });
 */
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>
#include <vector>

#include "scheduler/executor.h"
#include "scheduler/trial_future.h"

namespace sweep::scheduler {

// Submits every spec with the same fn, waits for all, returns outcomes in spec order (a failed
// trial is an outcome with state failed; nothing is rethrown).
std::vector<TrialOutcome> parfor(Executor& executor, const std::vector<TrialSpec>& specs,
                                 const TrialFn& fn);

// Index of the future that finished first among those not yet fetched, marking it fetched.
// nullopt when `timeout` passed first, or when every future has already been fetched.
// Thread-safe: two threads fetching from the same futures never get the same index.
std::optional<std::size_t> fetch_next(
    const std::vector<TrialFuture>& futures,
    std::chrono::duration<double> timeout = std::chrono::duration<double>::max());

// Calls callback(index, outcome) on the calling thread as each future completes, in completion
// order, and returns when all have. Does not read or set the fetched marks.
void after_each(
    const std::vector<TrialFuture>& futures,
    const std::function<void(std::size_t index, const TrialOutcome& outcome)>& callback);

}  // namespace sweep::scheduler
