/*
 * trial_numbers.h — the numbers a sampler hands out: 0, 1, 2, ... skipping every number an
 * earlier run already used (restored), lowest first.
 */
#pragma once

#include <cstdint>
#include <set>

namespace sweep::search {

class TrialNumbers {
 public:
  // `number` belongs to an earlier run: never hand it out.
  void take(std::uint64_t number) {
    if (number >= next_) taken_.insert(number);
  }
  // The lowest number neither taken nor handed out.
  std::uint64_t peek() {
    while (!taken_.empty() && *taken_.begin() == next_) {
      taken_.erase(taken_.begin());
      ++next_;
    }
    return next_;
  }
  // Hands out peek().
  std::uint64_t next() {
    const std::uint64_t number = peek();
    ++next_;
    return number;
  }

 private:
  std::uint64_t next_ = 0;         // no number below it is free
  std::set<std::uint64_t> taken_;  // taken numbers >= next_
};

}  // namespace sweep::search
