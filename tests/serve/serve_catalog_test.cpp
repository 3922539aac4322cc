// The parts of `sweep serve` that need no socket: which names a URL may use, that looking one up
// creates nothing, the percent-encoding and escaping of names in the pages, and the store's
// change marker.
#include <gtest/gtest.h>

#include <filesystem>
#include <thread>

#include "store/store.h"
#include "sweep/serve/serve_pages.h"
#include "sweep/serve/store_version.h"
#include "sweep/serve/sweep_catalog.h"
#include "tests/reports/synthetic_store.h"
#include "tests/reports/synthetic_sweep.h"
#include "tests/serve/serve_test_util.h"

namespace sweep::serve {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

TEST(SweepCatalog, ANameIsOneDirectoryAndNothingElse) {
  for (const char* ok : {"quickstart", "lr bs", "x.y", "\xC3\xBC-ber", ".hidden-but-named"})
    EXPECT_TRUE(is_sweep_name(ok)) << ok;
  for (const char* bad : {"", ".", "..", "a/b", "../etc", "..\\x", "a\x01", "tab\there", "\x7f"})
    EXPECT_FALSE(is_sweep_name(bad)) << bad;
  EXPECT_FALSE(is_sweep_name(std::string(256, 'a')));
  EXPECT_TRUE(is_sweep_name(std::string(255, 'a')));
}

TEST(SweepCatalog, LookingUpANameCreatesNothing) {
  TempDir out;
  EXPECT_FALSE(find_sweep_database(out.path(), "missing"));
  EXPECT_FALSE(find_sweep_database(out.path(), ".."));
  EXPECT_FALSE(find_sweep_database(out.path() / "no-such-dir", "x"));
  fs::create_directories(out.path() / "dir-only");
  EXPECT_FALSE(find_sweep_database(out.path(), "dir-only"));
  fs::create_directories(out.path() / "a-directory" / "sweep.db");  // not a regular file
  EXPECT_FALSE(find_sweep_database(out.path(), "a-directory"));
  EXPECT_FALSE(fs::exists(out.path() / "missing"));
  EXPECT_FALSE(fs::exists(out.path() / "dir-only" / "sweep.db"));
  EXPECT_TRUE(sweep_names(out.path() / "no-such-dir").empty());
  EXPECT_TRUE(sweep_names(out.path()).empty());
  const SweepListing listing = describe_sweep(out.path(), "missing");
  EXPECT_FALSE(listing.sweep);
  EXPECT_FALSE(listing.error.empty());
}

TEST(SweepCatalog, ListsEverySweepDatabaseAndReadsItsBest) {
  TempDir out;
  for (const char* name : {"b-sweep", "a-sweep"}) {
    Store store(out.path() / name / "sweep.db");
    reports::testing::store_sweep(store, reports::testing::make_synthetic_sweep({.name = name}));
  }
  fs::create_directories(out.path() / "not-a-sweep");
  EXPECT_EQ(sweep_names(out.path()), (std::vector<std::string>{"a-sweep", "b-sweep"}));
  const SweepListing listing = describe_sweep(out.path(), "a-sweep");
  ASSERT_TRUE(listing.sweep) << listing.error;
  EXPECT_EQ(listing.sweep->sweep.name, "a-sweep");
  EXPECT_GT(listing.sweep->trial_count, 0);
  ASSERT_TRUE(listing.best);
  EXPECT_FALSE(listing.version.marker.empty());
  const auto data = load_sweep(out.path() / "a-sweep" / "sweep.db", "a-sweep");
  ASSERT_TRUE(data);
  EXPECT_EQ(data->name, "a-sweep");
  EXPECT_EQ(static_cast<std::int64_t>(data->trials.size()), listing.sweep->trial_count);
}

TEST(SweepCatalog, ARenamedDirectoryShowsTheSweepItHolds) {
  TempDir out;
  {
    Store store(out.path() / "old-name" / "sweep.db");
    reports::testing::store_sweep(store, reports::testing::make_synthetic_sweep({.name = "orig"}));
  }
  fs::rename(out.path() / "old-name", out.path() / "copy");
  const auto data = load_sweep(out.path() / "copy" / "sweep.db", "copy");
  ASSERT_TRUE(data);
  EXPECT_EQ(data->name, "orig");
}

TEST(ServePages, NamesArePercentEncodedInUrlsAndEscapedInText) {
  EXPECT_EQ(percent_encode("a b/<&>\"'?#%"), "a%20b%2F%3C%26%3E%22%27%3F%23%25");
  EXPECT_EQ(percent_encode("Az09-._~"), "Az09-._~");
  EXPECT_EQ(sweep_page_url("\xC3\xBC x"), "/sweep/%C3%BC%20x");

  SweepListing hostile;
  hostile.name = "<script>alert(1)</script>&x";
  hostile.error = "<img src=x onerror=alert(2)>";
  const std::string page = sweeps_page("runs/<dir>", {hostile});
  EXPECT_EQ(page.find("<script>alert"), std::string::npos);
  EXPECT_EQ(page.find("<img src=x"), std::string::npos);
  EXPECT_NE(page.find("&lt;script&gt;alert(1)&lt;/script&gt;&amp;x"), std::string::npos);
  EXPECT_NE(page.find("href=\"/sweep/%3Cscript%3Ealert%281%29%3C%2Fscript%3E%26x\""),
            std::string::npos);
  EXPECT_NE(page.find("runs/&lt;dir&gt;"), std::string::npos);

  const std::string error = message_page(404, "no sweep named '<b>'");
  EXPECT_NE(error.find("404 Not Found"), std::string::npos);
  EXPECT_NE(error.find("no sweep named &#39;&lt;b&gt;&#39;"), std::string::npos);

  SweepListing other;
  other.name = "b";
  const std::string compare = compare_page(hostile, other);
  EXPECT_EQ(compare.find("<script>alert"), std::string::npos);
  EXPECT_NE(compare.find("<iframe src=\"/sweep/b\""), std::string::npos);
}

TEST(StoreVersion, ChangesWithEveryWriteAndIsNotTrustedWhileFresh) {
  TempDir out;
  const fs::path db = out.path() / "s" / "sweep.db";
  EXPECT_EQ(store_version(db).marker, "");
  Store store(db);
  const auto id = reports::testing::store_sweep(
      store, reports::testing::make_synthetic_sweep({.name = "s", .with_misfits = false}));
  const StoreVersion before = store_version(db);
  ASSERT_FALSE(before.marker.empty());
  EXPECT_FALSE(before.settled) << "written just now";
  EXPECT_NE(issued_token(before), issued_token(before)) << "a fresh marker is never handed out";
  EXPECT_NE(issued_token(before), before.marker);

  const auto trials = store.trials(id);
  ASSERT_FALSE(trials.empty());
  store.log_metric({.trial_id = trials.front().id, .name = "extra", .step = 1, .value = 1});
  const StoreVersion after = store_version(db);
  EXPECT_NE(after.marker, before.marker);
  EXPECT_GE(after.last_change, before.last_change);

  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  const StoreVersion quiet = store_version(db);
  EXPECT_EQ(quiet.marker, after.marker) << "reading changes nothing";
  EXPECT_TRUE(quiet.settled);
  EXPECT_EQ(issued_token(quiet), quiet.marker);
}

}  // namespace
}  // namespace sweep::serve
