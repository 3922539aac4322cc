/*
 * suggest.h — "did you mean 'learning_rate'?" for a misspelt key or choice.
 *
 * The nearest candidate by edit distance (a swap of two neighbours counts as one edit) is offered
 * only when it is close enough to be a likely typo (at most a third of the longer word, and at
 * most 3 edits); otherwise the message lists what is accepted instead of guessing.
 */
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace sweep::config {

std::size_t edit_distance(std::string_view a, std::string_view b);

// The closest candidate, or "" when none is close enough.
std::string nearest(std::string_view word, const std::vector<std::string>& candidates);

// " (did you mean 'x'?)" or " (one of: a, b, c)" — ready to append to a message.
std::string suggestion_suffix(std::string_view word, const std::vector<std::string>& candidates);

// "a, b, c"
std::string join(const std::vector<std::string>& words, std::string_view separator = ", ");

}  // namespace sweep::config
