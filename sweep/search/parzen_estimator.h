/*
 * parzen_estimator.h — a mixture of kernels over some dimensions, one kernel per observation
 * plus one prior kernel: the density l (good trials) or g (bad trials) of TPE.
 *
 * As Optuna's _ParzenEstimator (3.1): numeric kernels are normals truncated to the dimension's
 * interval, evaluated on a value's cell for grid dimensions; categorical kernels put weight 1 on
 * the observed choice plus prior_weight · prior / (n + 1) on every choice; the prior kernel is
 * centred on the interval with the interval's width as sigma (categorical: the prior itself).
 * Kernel widths: multivariate, one width per dimension from Scott's rule, 0.2 · n^(−1/(d+4)) of
 * the interval; univariate, the larger gap to a neighbouring observation. Widths are clipped to
 * [interval / min(100, n + 2), interval] (consider_magic_clip). The kernels are weighted by
 * default_weights (older observations lighter once there are more than 25) and prior_weight.
 * width_weighted_density scores a continuous kernel as 3.1 does, without its 1/sigma (optuna#5109):
 * each kernel then counts in proportion to its width, the prior's and isolated points' most.
 */
#pragma once

#include <cstdint>
#include <vector>

#include "sweep/config/search_space.h"
#include "sweep/search/search_dimension.h"

namespace sweep::search {

struct ParzenOptions {
  double prior_weight = 1.0;
  bool consider_magic_clip = true;
  bool consider_endpoints = false;      // univariate widths only
  bool multivariate = true;             // Scott's rule widths (else the neighbour gaps)
  bool width_weighted_density = false;  // continuous kernels without their 1/sigma (Optuna 3.1)
};

class ParzenEstimator {
 public:
  // `observations`: `count` rows of dims.size() model coordinates (SearchDimension::encode), in
  // the order the trials were asked. The dimensions must outlive the estimator.
  ParzenEstimator(std::vector<const SearchDimension*> dims, const std::vector<double>& observations,
                  std::size_t count, const ParzenOptions& options);

  // `count` draws from the mixture: rows of dims.size() model coordinates.
  std::vector<double> sample(config::UnitRng& rng, int count) const;

  // log density of the mixture at each of `count` rows of cells (SearchDimension::cell).
  std::vector<double> log_pdf(const std::vector<Cell>& cells, std::size_t count) const;

 private:
  struct NumericKernels {  // one entry per kernel, the prior last
    std::vector<double> mu, sigma, inverse_sigma, log_sigma;
    std::vector<double> log_truncated_mass;  // log of the kernel's mass inside [low, high]
    std::vector<double> log_normaliser;  // log sigma (unless width-weighted) + log_truncated_mass
    // Grid dimensions with one width for all observation kernels (multivariate): the distinct
    // centres (observations sit on the grid, so there are few) and each observation's centre,
    // so that a cell's mass is computed once per centre, not once per kernel.
    std::vector<double> centres;
    std::vector<std::uint32_t> centre_of;
  };
  struct CategoricalKernels {
    std::vector<int> observed;                        // per observation kernel: its choice
    std::vector<double> log_base, log_base_plus_one;  // per choice: log of the prior part (+1)
    double log_row_total = 0;  // log of every observation kernel's total weight
    std::vector<double> base;  // per choice: the prior part of an observation kernel
  };

  std::size_t kernels() const { return log_weights_.size(); }
  void add_numeric(std::size_t dim, const std::vector<double>& observations, double sigma0);
  void add_categorical(std::size_t dim, const std::vector<double>& observations);

  std::vector<const SearchDimension*> dims_;
  std::size_t observations_ = 0;
  ParzenOptions options_;
  std::vector<double> weights_;                  // per kernel, summing to 1
  std::vector<double> log_weights_;              // per kernel
  std::vector<NumericKernels> numeric_;          // per dimension (empty for categorical)
  std::vector<CategoricalKernels> categorical_;  // per dimension (empty for numeric)
};

}  // namespace sweep::search
