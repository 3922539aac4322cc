/*
 * load_data.h — from a DataSpec to the training and validation sets plus normalisation constants.
 *
 * Order of operations (each documented because results depend on it): read the files; keep the
 * first train_limit / test_limit images; split off the holdout (seeded by training.seed, not
 * stratified); compute per-channel mean/std from what remains for training. The validation set
 * never influences the normalisation.
 */
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "trainer/data/dataset.h"
#include "trainer/train_config.h"

namespace sweep::trainer {

class SharedUpload;  // trainer/data/device_dataset.h

struct LoadedData {
  Dataset train;
  Dataset validation;             // empty when data.validation is none
  ChannelStats norm;              // mean 0 / std 1 when data.normalize is false
  std::string validation_source;  // "test", "holdout" or "none"
  // train and validation already on a device, for every run there to read (a fused array's
  // members); null, or another device: each run uploads its own copy.
  std::shared_ptr<const SharedUpload> uploaded;
};

// Throws sweep::Error with the file and the reason for unreadable data, and for unknown names.
LoadedData load_data(const DataSpec& spec, std::uint64_t seed);

// The seed a load depends on: the training seed where a holdout is drawn, else 0. Two loads of
// the same DataSpec with the same load_seed give the same data.
std::uint64_t load_seed(const DataSpec& spec, std::uint64_t seed);

// load_data's result shared read-only by the trials that load the same data (the same DataSpec,
// and the same seed where a holdout is drawn) while its files are unchanged: a trial that trains
// on the whole of Fashion-MNIST no longer copies its 55 MB and recomputes its statistics. The
// last two are kept for the process; an edited data set is loaded again.
std::shared_ptr<const LoadedData> load_data_shared(const DataSpec& spec, std::uint64_t seed);
// What load_data_shared would give, without loading: null when it is not kept (a load under way
// is waited for).
std::shared_ptr<const LoadedData> load_data_cached(const DataSpec& spec, std::uint64_t seed);

}  // namespace sweep::trainer
