/*
 * suggest.cpp — edit distance (Levenshtein plus swapped neighbours); the threshold keeps short
 * words from matching anything (a 3-letter typo must be within 1 edit).
 */
#include "sweep/config/suggest.h"

#include <algorithm>
#include <cctype>
#include <numeric>

namespace sweep::config {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  // Optimal string alignment: insertions, deletions, substitutions and swaps of neighbours
  // ("rleu" → "relu" is one edit), over three rolling rows.
  const auto same = [](char x, char y) {
    return std::tolower(static_cast<unsigned char>(x)) ==
           std::tolower(static_cast<unsigned char>(y));
  };
  std::vector<std::size_t> before(b.size() + 1), previous(b.size() + 1), current(b.size() + 1);
  std::iota(previous.begin(), previous.end(), std::size_t{0});
  for (std::size_t i = 1; i <= a.size(); ++i) {
    current[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t cost = same(a[i - 1], b[j - 1]) ? 0 : 1;
      current[j] = std::min({previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost});
      if (i > 1 && j > 1 && same(a[i - 1], b[j - 2]) && same(a[i - 2], b[j - 1]))
        current[j] = std::min(current[j], before[j - 2] + 1);
    }
    before.swap(previous);
    previous.swap(current);
  }
  return previous[b.size()];
}

std::string nearest(std::string_view word, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t best_distance = 0;
  for (const std::string& candidate : candidates) {
    const std::size_t d = edit_distance(word, candidate);
    const std::size_t longer = std::max(word.size(), candidate.size());
    const std::size_t allowed = std::min<std::size_t>(3, std::max<std::size_t>(1, longer / 3));
    if (d <= allowed && (best.empty() || d < best_distance)) {
      best = candidate;
      best_distance = d;
    }
  }
  return best;
}

std::string suggestion_suffix(std::string_view word, const std::vector<std::string>& candidates) {
  const std::string near = nearest(word, candidates);
  if (!near.empty()) return " (did you mean '" + near + "'?)";
  return " (one of: " + join(candidates) + ")";
}

std::string join(const std::vector<std::string>& words, std::string_view separator) {
  std::string out;
  for (const std::string& w : words) {
    if (!out.empty()) out += separator;
    out += w;
  }
  return out;
}

}  // namespace sweep::config
