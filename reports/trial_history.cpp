/*
 * trial_history.cpp — trial_history() (report_model.h): the best score so far, trial by trial.
 *
 * The non-obvious decision: trials are taken in number order, not in the order they finished,
 * since the number is what the chart's x axis shows and what people call a trial; with several
 * slots a later trial can finish first, and the step line then shows the best among the trials
 * numbered up to there.
 */
#include <algorithm>
#include <numeric>

#include "reports/report_model.h"

namespace sweep::reports {

std::vector<HistoryPoint> trial_history(const ReportData& data,
                                        const std::vector<TrialScore>& scores) {
  std::vector<std::size_t> finished;
  for (std::size_t i = 0; i < data.trials.size() && i < scores.size(); ++i)
    if (is_terminal(data.trials[i].state)) finished.push_back(i);
  std::stable_sort(finished.begin(), finished.end(), [&](std::size_t a, std::size_t b) {
    return data.trials[a].number < data.trials[b].number;
  });
  std::vector<HistoryPoint> history;
  history.reserve(finished.size());
  std::optional<double> best;
  for (const std::size_t i : finished) {
    if (const auto& value = scores[i].best; value && (!best || is_better(*value, *best, data.goal)))
      best = value;
    history.push_back({i, best});
  }
  return history;
}

}  // namespace sweep::reports
