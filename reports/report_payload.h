/*
 * report_payload.h — the JSON the report's charts and table are drawn from.
 *
 * The non-obvious decision: the payload is shaped for size, since a sweep of 1,000 trials x 100
 * epochs must stay well under 5 MB with ECharts inside. Values are rounded to 5 significant
 * digits and epochs to 4; a curve whose epochs step evenly (1, 2, 3, ...) stores only its first
 * epoch and the step ("x0", "dx") instead of every x; per-iteration training loss is averaged down
 * to at most kMaxLossPoints points per trial. NaN / ±Inf become null, with the kind kept beside
 * (finalKind, lossKind, nonfinite) so the page can say "NaN" instead of a blank.
 *
 * Shape (indices refer to the arrays they name):
 *   {metric, goal, dataset, name,
 *    params: [{name, label, values, numeric, log}], fixed: {name: value},
 *    axes: {x: param index | null, y: ...},
 *    trials: [{id, n, state, p: [value per swept param], best, bestEpoch, final, finalKind,
 *              loss, lossKind, epochs, time, ips, device, error, stop}],
 *    curves: [{m: curve | null, l: curve | null, nonfinite: {metric, epoch, kind} | null}],
 *             where curve = {y: [...], x: [...]} or {y: [...], x0, dx}
 *    best: trial index | null, runnerUp: trial index | null,
 *    heat: [[x index, y index, value, trial index, trials in cell]],
 *    bestCell, runnerUpCell: heat index | null,
 *    confusion: {trial, labels, matrix} | null, counts: [[state, n]], lossName,
 *    history: [[trial index, best so far | null]]   (finished trials, by number; the value is
 *                                                     trials[i].best),
 *    importance: {rows: [[param index, importance, spearman | null]] (most important first),
 *                 completed, stoppedEarly: trials fitted, reason: why no rows | null}}
 */
#pragma once

#include <cstddef>

#include "common/json.h"
#include "reports/report_data.h"
#include "reports/report_model.h"

namespace sweep::reports {

inline constexpr std::size_t kMaxMetricPoints = 300;
inline constexpr std::size_t kMaxLossPoints = 200;

// The name of the training-loss series the report plots ("loss", else "train_loss"), or "".
std::string loss_series_name(const ReportData& data);

sweep::Json build_payload(const ReportData& data, const ReportModel& model);

// A best trial's confusion matrix from its summary, validated (square, non-negative numbers);
// empty when the summary has none or it is malformed.
std::vector<std::vector<double>> confusion_matrix(const sweep::Json& summary);

}  // namespace sweep::reports
