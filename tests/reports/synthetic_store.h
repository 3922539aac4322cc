/*
 * synthetic_store.h — writes a ReportData into a real Store, as a sweep run would.
 *
 * The non-obvious decision: it goes through the store's public write API only (create_sweep,
 * add_trials, claim_trial, log_metrics, set_trial_state), so what the report loads back is what a
 * real sweep leaves behind, timestamps included (the store stamps them; the ReportData's own
 * times are not copied).
 */
#pragma once

#include <cstdint>

#include "reports/report_data.h"
#include "store/store.h"

namespace sweep::reports::testing {

// Returns the new sweep's id. Metrics go in batches of `batch_points` per transaction.
std::int64_t store_sweep(Store& store, const ReportData& data, std::size_t batch_points = 20'000);

}  // namespace sweep::reports::testing
