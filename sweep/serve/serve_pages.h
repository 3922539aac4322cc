/*
 * serve_pages.h — the pages `sweep serve` shows around the report: the list of sweeps, two
 * sweeps side by side, and the page of an error; plus the URLs they link to.
 *
 * The non-obvious decisions:
 *  - Every page is a pure function of what the catalog read (sweep_catalog.h), written with the
 *    report's escaping and style sheet (reports/html_escape.h, assets::report_css()), so it is
 *    tested without a socket and looks like the report it links to.
 *  - A sweep name goes into a URL percent-encoded (every byte but RFC 3986's unreserved ones)
 *    and into HTML escaped, so a directory named "<b>&x y" links correctly and shows as text.
 *  - Two sweeps side by side are the two live report pages in frames, under a table of the
 *    numbers that decide between them: each frame keeps its own zoom and filters and updates
 *    itself while its sweep runs.
 *  - An error page says the status and one sentence, never an exception's origin or a stack.
 *
 * Thread safety: pure functions.
 */
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "common/json.h"
#include "sweep/serve/sweep_catalog.h"

namespace sweep::serve {

// RFC 3986 percent-encoding of one path segment or query value.
std::string percent_encode(std::string_view text);

std::string sweep_page_url(std::string_view name);  // /sweep/NAME
std::string sweep_api_url(std::string_view name);   // /api/sweep/NAME
inline constexpr const char* kSweepsUrl = "/sweeps";

// The list of sweeps in `out_dir`, with links and a form to compare two of them.
std::string sweeps_page(const std::filesystem::path& out_dir,
                        const std::vector<SweepListing>& sweeps);

// Sweeps `a` and `b` side by side.
std::string compare_page(const SweepListing& a, const SweepListing& b);

// "Not Found" for 404: the reason phrase of a status sweep serve answers with.
const char* reason_phrase(int status);

// "404 Not Found" and what was not found, as a small page.
std::string message_page(int status, std::string_view message);

// One sweep of the list, as /api/sweeps gives it.
sweep::Json listing_json(const SweepListing& listing);

}  // namespace sweep::serve
