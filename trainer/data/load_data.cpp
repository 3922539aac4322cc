/*
 * load_data.cpp — dispatch on the data set's name, then limits, holdout and statistics.
 *
 * The holdout is drawn with our own Fisher-Yates over std::mt19937_64's raw output (not
 * std::shuffle, whose algorithm is left to the standard library), and the training part keeps the
 * files' order, so train_limit and the holdout compose predictably.
 */
#include "trainer/data/load_data.h"

#include <algorithm>
#include <cmath>

#include "common/check.h"
#include "trainer/data/cifar_reader.h"
#include "trainer/data/idx_reader.h"
#include "trainer/data/shuffle.h"
#include "trainer/data/synthetic.h"

namespace sweep::trainer {

namespace {

void read_both(const DataSpec& spec, Dataset& train, Dataset& test, bool need_test) {
  const std::string& name = spec.dataset;
  if (name == "fashion-mnist" || name == "mnist") {
    train = read_idx_split(spec.path, "train", 10);
    if (need_test) test = read_idx_split(spec.path, "t10k", 10);
  } else if (name == "cifar10" || name == "cifar-10") {
    train = read_cifar10_split(spec.path, "train");
    if (need_test) test = read_cifar10_split(spec.path, "test");
  } else if (name == "synthetic") {
    train = make_synthetic(spec.synthetic, "train");
    if (need_test) test = make_synthetic(spec.synthetic, "test");
  } else {
    throw Error("data.dataset: unknown data set '" + name +
                "' (fashion-mnist, mnist, cifar10 or synthetic)");
  }
}

}  // namespace

LoadedData load_data(const DataSpec& spec, std::uint64_t seed) {
  const std::string& v = spec.validation;
  if (v != "test" && v != "holdout" && v != "none")
    throw Error("data.validation: '" + v + "' is not one of test, holdout, none");
  LoadedData out;
  out.validation_source = v;
  Dataset test;
  read_both(spec, out.train, test, v == "test");
  keep_first(out.train, spec.train_limit);

  if (v == "test") {
    keep_first(test, spec.test_limit);
    out.validation = std::move(test);
  } else if (v == "holdout") {
    if (!(spec.holdout_fraction > 0 && spec.holdout_fraction < 1))
      throw Error("data.holdout_fraction must be in (0, 1), not " +
                  std::to_string(spec.holdout_fraction));
    const std::int64_t n = out.train.size();
    const auto held = static_cast<std::int64_t>(std::llround(double(n) * spec.holdout_fraction));
    if (held < 1 || held >= n)
      throw Error("data.holdout_fraction " + std::to_string(spec.holdout_fraction) + " of " +
                  std::to_string(n) + " training images leaves an empty set");
    std::vector<std::int32_t> perm = shuffled_indices(n, seed ^ 0x686f6c646f7574ull);  // "holdout"
    std::vector<std::int64_t> val_rows(perm.begin(), perm.begin() + held);
    std::vector<std::int64_t> train_rows(perm.begin() + held, perm.end());
    std::sort(val_rows.begin(), val_rows.end());
    std::sort(train_rows.begin(), train_rows.end());
    out.validation = take_rows(out.train, val_rows);
    out.train = take_rows(out.train, train_rows);
  }
  if (out.train.empty()) throw Error(out.train.source + ": the training set is empty");
  if (spec.normalize) out.norm = channel_stats(out.train);
  return out;
}

}  // namespace sweep::trainer
