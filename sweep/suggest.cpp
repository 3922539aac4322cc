/*
 * suggest.cpp — Levenshtein distance with one row of memory; the threshold keeps short words from
 * matching anything (a 3-letter typo must be within 1 edit).
 */
#include "sweep/suggest.h"

#include <algorithm>
#include <cctype>
#include <numeric>

namespace sweep::config {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), std::size_t{0});
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      const bool same = std::tolower(static_cast<unsigned char>(a[i - 1])) ==
                        std::tolower(static_cast<unsigned char>(b[j - 1]));
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (same ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
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
