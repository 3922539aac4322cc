/*
 * list_sweeps.cpp — sweep as a C++ library: the sweeps of an output directory and the best of
 * each, read-only, as `sweep serve` lists them (sweep/serve/sweep_catalog.h).
 *
 *   build/examples/list_sweeps runs
 */
#include <cstdio>

#include "sweep/serve/sweep_catalog.h"

int main(int argc, char** argv) {
  const std::filesystem::path out = argc > 1 ? argv[1] : "runs";
  for (const std::string& name : sweep::serve::sweep_names(out)) {
    const sweep::serve::SweepListing listing = sweep::serve::describe_sweep(out, name);
    if (!listing.error.empty())
      std::printf("%s: %s\n", name.c_str(), listing.error.c_str());
    else if (listing.best)
      std::printf("%s: best %g (trial %lld)\n", name.c_str(), *listing.best,
                  static_cast<long long>(listing.best_trial.value_or(-1)));
    else
      std::printf("%s: no result yet\n", name.c_str());
  }
  return 0;
}
