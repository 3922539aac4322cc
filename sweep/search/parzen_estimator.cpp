/*
 * parzen_estimator.cpp — kernel parameters, sampling and the log-density.
 *
 * The log-density is the inner loop of an ask (candidates × kernels × dimensions, 24 × 1,000 ×
 * d with a thousand trials): per kernel and dimension it is a multiply-add for a continuous
 * dimension and a table look-up for a categorical one; only grid dimensions pay for the normal
 * CDF, and only for kernels near enough to matter.
 */
#include "sweep/search/parzen_estimator.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>

#include "sweep/search/trial_ranking.h"
#include "sweep/search/truncated_normal.h"

namespace sweep::search {

namespace {

// A term this far below the largest weighs e^-40 (4e-18) of it: skipping such terms changes a
// density by less than 1e-14 relative with a thousand kernels, and spares exp() the far
// kernels (most of them, and its slow path near underflow).
constexpr double kNegligibleLogTerm = -40;

double log_sum_exp(const std::vector<double>& terms) {
  const double top = *std::max_element(terms.begin(), terms.end());
  if (top == -kInf) return -kInf;
  double sum = 0;
  for (double t : terms)
    if (t - top > kNegligibleLogTerm) sum += std::exp(t - top);
  return top + std::log(sum);
}

// An index drawn from `weights` (summing to about 1) at uniform u.
std::size_t pick(const std::vector<double>& weights, double u) {
  double cumulative = 0;
  for (std::size_t i = 0; i < weights.size(); ++i) {
    cumulative += weights[i];
    if (u < cumulative) return i;
  }
  return weights.size() - 1;
}

}  // namespace

ParzenEstimator::ParzenEstimator(std::vector<const SearchDimension*> dims,
                                 const std::vector<double>& observations, std::size_t count,
                                 const ParzenOptions& options)
    : dims_(std::move(dims)), observations_(count), options_(options) {
  weights_ = default_weights(static_cast<int>(count));
  weights_.push_back(options.prior_weight);
  const double total = std::accumulate(weights_.begin(), weights_.end(), 0.0);
  for (double& w : weights_) w /= total;
  log_weights_.resize(weights_.size());
  for (std::size_t i = 0; i < weights_.size(); ++i) log_weights_[i] = std::log(weights_[i]);

  // Scott's rule (as BOHB): the same width for every kernel of a dimension.
  const double n = static_cast<double>(std::max<std::size_t>(count, 1));
  const double sigma0 = 0.2 * std::pow(n, -1.0 / (static_cast<double>(dims_.size()) + 4.0));
  numeric_.resize(dims_.size());
  categorical_.resize(dims_.size());
  for (std::size_t j = 0; j < dims_.size(); ++j) {
    std::vector<double> column(count);
    for (std::size_t i = 0; i < count; ++i) column[i] = observations[i * dims_.size() + j];
    if (dims_[j]->categorical())
      add_categorical(j, column);
    else
      add_numeric(j, column, sigma0);
  }
}

void ParzenEstimator::add_numeric(std::size_t dim, const std::vector<double>& observations,
                                  double sigma0) {
  const SearchDimension& d = *dims_[dim];
  const double low = d.low(), high = d.high(), width = high - low;
  NumericKernels& k = numeric_[dim];
  k.mu = observations;
  k.mu.push_back(0.5 * (low + high));  // the prior's kernel
  const std::size_t m = k.mu.size();
  k.sigma.assign(m, sigma0 * width);
  if (!options_.multivariate) {
    // Each kernel as wide as the larger gap to its neighbours (the interval's ends included).
    std::vector<std::size_t> order(m);
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return k.mu[a] < k.mu[b]; });
    std::vector<double> sorted(m + 2);
    sorted.front() = low;
    sorted.back() = high;
    for (std::size_t i = 0; i < m; ++i) sorted[i + 1] = k.mu[order[i]];
    std::vector<double> gaps(m);
    for (std::size_t i = 0; i < m; ++i)
      gaps[i] = std::max(sorted[i + 1] - sorted[i], sorted[i + 2] - sorted[i + 1]);
    if (!options_.consider_endpoints && sorted.size() >= 4) {
      gaps.front() = sorted[2] - sorted[1];
      gaps.back() = sorted[m] - sorted[m - 1];
    }
    for (std::size_t i = 0; i < m; ++i) k.sigma[order[i]] = gaps[i];
  }
  const double max_sigma = width;
  const double min_sigma =
      options_.consider_magic_clip ? width / std::min(100.0, 1.0 + static_cast<double>(m)) : 1e-12;
  for (double& s : k.sigma) s = std::clamp(s, min_sigma, max_sigma);
  k.sigma.back() = width;  // the prior's kernel spans the interval
  k.inverse_sigma.resize(m);
  k.log_truncated_mass.resize(m);
  k.log_normaliser.resize(m);
  k.log_sigma.resize(m);
  for (std::size_t c = 0; c < m; ++c) {
    k.inverse_sigma[c] = 1.0 / k.sigma[c];
    k.log_truncated_mass[c] = log_normal_mass((low - k.mu[c]) * k.inverse_sigma[c],
                                              (high - k.mu[c]) * k.inverse_sigma[c]);
    // Width-weighted (Optuna 3.1's scoring, optuna#5109): a kernel's density is not divided by
    // its sigma, so each kernel counts in proportion to its width.
    k.log_sigma[c] = std::log(k.sigma[c]);
    k.log_normaliser[c] =
        (options_.width_weighted_density ? 0.0 : k.log_sigma[c]) + k.log_truncated_mass[c];
  }
  if (d.discrete() && options_.multivariate && m > 1) {
    k.centres.assign(k.mu.begin(), k.mu.end() - 1);
    std::sort(k.centres.begin(), k.centres.end());
    k.centres.erase(std::unique(k.centres.begin(), k.centres.end()), k.centres.end());
    k.centre_of.resize(m - 1);
    for (std::size_t c = 0; c + 1 < m; ++c)
      k.centre_of[c] = static_cast<std::uint32_t>(
          std::lower_bound(k.centres.begin(), k.centres.end(), k.mu[c]) - k.centres.begin());
  }
}

void ParzenEstimator::add_categorical(std::size_t dim, const std::vector<double>& observations) {
  const std::vector<double>& prior = dims_[dim]->prior();
  const double choices = static_cast<double>(prior.size());
  CategoricalKernels& k = categorical_[dim];
  k.observed.resize(observations.size());
  for (std::size_t i = 0; i < observations.size(); ++i)
    k.observed[i] = static_cast<int>(observations[i]);
  // Optuna gives every choice prior_weight / (n + 1); with probabilities that same total is
  // shared out in proportion to them (equal probabilities give Optuna's numbers exactly).
  const double share = options_.prior_weight / static_cast<double>(observations.size() + 1);
  k.base.resize(prior.size());
  k.log_base.resize(prior.size());
  k.log_base_plus_one.resize(prior.size());
  double base_total = 0;
  for (std::size_t c = 0; c < prior.size(); ++c) {
    k.base[c] = share * choices * prior[c];
    k.log_base[c] = std::log(k.base[c]);
    k.log_base_plus_one[c] = std::log1p(k.base[c]);
    base_total += k.base[c];
  }
  k.log_row_total = std::log(base_total + 1.0);
}

std::vector<double> ParzenEstimator::sample(config::UnitRng& rng, int count) const {
  const std::size_t d = dims_.size();
  std::vector<double> out(static_cast<std::size_t>(count) * d);
  std::vector<double> row_weights;
  for (int s = 0; s < count; ++s) {
    const std::size_t kernel = pick(weights_, rng.uniform());
    for (std::size_t j = 0; j < d; ++j) {
      double& x = out[static_cast<std::size_t>(s) * d + j];
      if (dims_[j]->categorical()) {
        const CategoricalKernels& k = categorical_[j];
        if (kernel == observations_) {  // the prior's kernel
          x = static_cast<double>(pick(dims_[j]->prior(), rng.uniform()));
          continue;
        }
        row_weights = k.base;
        row_weights[static_cast<std::size_t>(k.observed[kernel])] += 1.0;
        const double total = std::accumulate(row_weights.begin(), row_weights.end(), 0.0);
        for (double& w : row_weights) w /= total;
        x = static_cast<double>(pick(row_weights, rng.uniform()));
        continue;
      }
      const NumericKernels& k = numeric_[j];
      const double low = dims_[j]->low(), high = dims_[j]->high();
      const double mu = k.mu[kernel], sigma = k.sigma[kernel];
      const double z =
          truncated_normal_quantile((low - mu) / sigma, (high - mu) / sigma, rng.uniform());
      x = std::clamp(mu + sigma * z, low, high);
    }
  }
  return out;
}

std::vector<double> ParzenEstimator::log_pdf(const std::vector<Cell>& cells,
                                             std::size_t count) const {
  const std::size_t d = dims_.size();
  const std::size_t m = kernels();
  std::vector<double> out(count);
  std::vector<double> terms(m);
  std::vector<double> centre_mass;
  // Rows with the same cells as an earlier row (candidates on one grid value, the same
  // choice) have its density: on few-valued parameters most rows repeat one.
  std::map<std::vector<double>, std::size_t> first_row;  // a row's cells (lo, hi, ...) → row
  std::vector<double> key(2 * d);
  for (std::size_t s = 0; s < count; ++s) {
    for (std::size_t j = 0; j < d; ++j) {
      key[2 * j] = cells[s * d + j].lo;
      key[2 * j + 1] = cells[s * d + j].hi;
    }
    const auto [row, added] = first_row.try_emplace(key, s);
    if (!added) {
      out[s] = out[row->second];
      continue;
    }
    terms = log_weights_;
    for (std::size_t j = 0; j < d; ++j) {
      const Cell& cell = cells[s * d + j];
      if (dims_[j]->categorical()) {
        const CategoricalKernels& k = categorical_[j];
        const int choice = static_cast<int>(cell.lo);
        const auto c = static_cast<std::size_t>(choice);
        const double miss = k.log_base[c] - k.log_row_total;
        const double hit = k.log_base_plus_one[c] - k.log_row_total;
        for (std::size_t i = 0; i < observations_; ++i)
          terms[i] += k.observed[i] == choice ? hit : miss;
        terms[observations_] += std::log(dims_[j]->prior()[c]);
        continue;
      }
      const NumericKernels& k = numeric_[j];
      if (!dims_[j]->discrete()) {
        const double x = cell.lo;
        for (std::size_t i = 0; i < m; ++i) {
          const double z = (x - k.mu[i]) * k.inverse_sigma[i];
          terms[i] += log_normal_pdf(z) - k.log_normaliser[i];
        }
        continue;
      }
      auto log_cell_mass = [&](std::size_t i, double mu) {
        return log_normal_mass((cell.lo - mu) * k.inverse_sigma[i],
                               (cell.hi - mu) * k.inverse_sigma[i]);
      };
      if (k.centres.empty() && d == 1) {
        // One dimension (univariate): the prior kernel's term is a floor under the density, so
        // a kernel whose mass over the cell is bounded (by its density at the cell's nearest
        // point times the cell's width) far below that floor is skipped as log_sum_exp would
        // skip it, without paying for its normal CDFs. Most of a thousand kernels are that far.
        const double prior_term =
            terms[m - 1] + log_cell_mass(m - 1, k.mu[m - 1]) - k.log_truncated_mass[m - 1];
        const double log_cell_width = std::log(cell.hi - cell.lo);
        for (std::size_t i = 0; i + 1 < m; ++i) {
          const double gap = std::max({cell.lo - k.mu[i], k.mu[i] - cell.hi, 0.0});
          const double bound = terms[i] + log_normal_pdf(gap * k.inverse_sigma[i]) +
                               log_cell_width - k.log_sigma[i] - k.log_truncated_mass[i];
          terms[i] = bound - prior_term < kNegligibleLogTerm
                         ? -kInf
                         : terms[i] + log_cell_mass(i, k.mu[i]) - k.log_truncated_mass[i];
        }
        terms[m - 1] = prior_term;
        continue;
      }
      if (k.centres.empty()) {
        for (std::size_t i = 0; i < m; ++i)
          terms[i] += log_cell_mass(i, k.mu[i]) - k.log_truncated_mass[i];
        continue;
      }
      // The observation kernels share one width: a mass per distinct centre (the truncation
      // mass too depends only on the centre, so kernel i's is the one to subtract).
      centre_mass.resize(k.centres.size());
      for (std::size_t u = 0; u < k.centres.size(); ++u)
        centre_mass[u] = log_cell_mass(0, k.centres[u]);
      for (std::size_t i = 0; i + 1 < m; ++i)
        terms[i] += centre_mass[k.centre_of[i]] - k.log_truncated_mass[i];
      terms[m - 1] += log_cell_mass(m - 1, k.mu[m - 1]) - k.log_truncated_mass[m - 1];
    }
    out[s] = log_sum_exp(terms);
  }
  return out;
}

}  // namespace sweep::search
