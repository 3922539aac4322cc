/*
 * tpe_sampler.cpp — ask: random start-up, then the l/g ratio over candidates drawn from l.
 */
#include "sweep/search/tpe_sampler.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>

#include "common/check.h"
#include "sweep/config/expand.h"
#include "sweep/search/trial_ranking.h"

namespace sweep::search {

namespace {

// Batches of candidates drawn before a suggestion gives up finding a point not asked yet (and
// then random draws, as many again): only a nearly exhausted grid gets that far.
constexpr int kCandidateBatches = 4;
constexpr int kRandomRetries = 4 * 24;

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// The generator of suggestion `index`: its own stream, apart from random search's
// (config::sample_point's), which the start-up draws use as they are.
config::UnitRng suggestion_rng(std::uint64_t seed, std::uint64_t index) {
  constexpr std::uint64_t kTpeStream = 0x7470652d73747265ull;  // "tpe-stre"
  return config::UnitRng(splitmix64(seed ^ kTpeStream ^ splitmix64(index + 1)));
}

std::vector<config::Draw> random_draws(const config::SearchSpace& space, config::UnitRng& rng) {
  std::vector<config::Draw> draws;
  draws.reserve(space.params.size());
  for (const config::ParamSpec& p : space.params) draws.push_back(config::sample_param(p, rng));
  return draws;
}

// Candidate indices by score, best first (ties: the earlier draw).
std::vector<std::size_t> by_score(const std::vector<double>& score) {
  std::vector<std::size_t> order(score.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return score[a] > score[b]; });
  return order;
}

}  // namespace

TpeSampler::TpeSampler(const config::SearchSpace& space, TpeOptions options, bool maximize,
                       std::uint64_t seed, std::uint64_t max_trials, TrialLayout layout)
    : space_(space),
      options_(options),
      maximize_(maximize),
      seed_(seed),
      max_trials_(max_trials),
      layout_(layout) {
  if (layout_.repeats < 1) throw Error("TpeSampler: repeats must be >= 1");
  if (options_.n_ei_candidates < 1) throw Error("TpeSampler: n_ei_candidates must be >= 1");
  for (std::size_t i = 0; i < space_.params.size(); ++i)
    if (auto dim = SearchDimension::of(space_.params[i], i)) dims_.push_back(std::move(*dim));
}

std::optional<config::TrialPoint> TpeSampler::ask() {
  if (numbers_.peek() >= capacity()) return std::nullopt;
  const std::uint64_t number = numbers_.next();
  const auto repeats = static_cast<std::uint64_t>(layout_.repeats);
  const std::uint64_t index = number / repeats;
  if (!suggestions_.contains(index)) remember(index, make_suggestion(suggest(index)));
  trials_[number] = Trial{index, std::nullopt};
  return config::trial_point_from_draws(space_, layout_.base_training_seed, layout_.repeats, number,
                                        suggestions_.at(index).draws);
}

void TpeSampler::tell(std::uint64_t number, const TrialResult& result) {
  const auto it = trials_.find(number);
  if (it == trials_.end())
    throw Error("TpeSampler::tell: trial " + std::to_string(number) +
                " was never asked nor restored");
  if (!it->second.result) ++told_;
  it->second.result = result;
}

void TpeSampler::restore(const config::TrialPoint& point,
                         const std::optional<TrialResult>& result) {
  if (point.number < 0) throw Error("TpeSampler::restore: a trial number is >= 0");
  const auto number = static_cast<std::uint64_t>(point.number);
  const std::uint64_t index = number / static_cast<std::uint64_t>(layout_.repeats);
  numbers_.take(number);
  if (!suggestions_.contains(index)) {
    std::vector<config::Draw> draws;
    for (const config::ParamSpec& p : space_.params) {
      config::Draw draw{point.params.is_object() ? point.params.value(p.name, sweep::Json())
                                                 : sweep::Json()};
      for (std::size_t v = 0; p.is_discrete() && v < p.values.size(); ++v)
        if (p.values[v] == draw.value) {
          draw.value_index = static_cast<int>(v);
          break;
        }
      draws.push_back(std::move(draw));
    }
    remember(index, make_suggestion(std::move(draws)));
  }
  Trial& trial = trials_[number];
  if (trial.result) --told_;
  trial = Trial{index, result};
  if (result) ++told_;
}

TpeSampler::Suggestion TpeSampler::make_suggestion(std::vector<config::Draw> draws) const {
  Suggestion suggestion;
  suggestion.coordinates.reserve(dims_.size());
  for (const SearchDimension& d : dims_) {
    const std::optional<double> coordinate = d.encode(draws[d.param_index()].value);
    suggestion.modelled = suggestion.modelled && coordinate.has_value();
    suggestion.coordinates.push_back(coordinate.value_or(0));
  }
  suggestion.draws = std::move(draws);
  return suggestion;
}

std::vector<double> TpeSampler::point_key(const std::vector<config::Draw>& draws) const {
  std::vector<double> key;
  key.reserve(draws.size());
  for (std::size_t i = 0; i < draws.size(); ++i) {
    if (space_.params[i].is_discrete()) {
      key.push_back(draws[i].value_index);
      continue;
    }
    const sweep::Json& value = draws[i].value;
    const double x = value.is_number() ? value.get<double>() : std::nan("");
    key.push_back(std::isnan(x) ? -std::numeric_limits<double>::infinity() : x);
  }
  return key;
}

bool TpeSampler::is_new(const std::vector<config::Draw>& draws) const {
  return !points_.contains(point_key(draws));
}

void TpeSampler::remember(std::uint64_t index, Suggestion suggestion) {
  points_.insert(point_key(suggestion.draws));
  suggestions_[index] = std::move(suggestion);
}

std::vector<config::Draw> TpeSampler::suggest(std::uint64_t index) {
  config::UnitRng rng = suggestion_rng(seed_, index);
  std::vector<config::Draw> first;
  if (told_ < static_cast<std::size_t>(std::max(options_.n_startup_trials, 0)) || dims_.empty()) {
    first = config::sample_point(space_, seed_, index);
    if (is_new(first)) return first;
  } else if (std::optional<std::vector<config::Draw>> draws = model_draw(rng)) {
    return *draws;
  } else {
    first = config::sample_point(space_, seed_, index);
  }
  for (int attempt = 0; attempt < kRandomRetries; ++attempt) {
    std::vector<config::Draw> draws = random_draws(space_, rng);
    if (is_new(draws)) return draws;
  }
  return first;  // every draw was a point already asked: the space is (nearly) exhausted
}

std::optional<std::vector<config::Draw>> TpeSampler::model_draw(config::UnitRng& rng) {
  // The observations, in the order asked (trial number): told trials and, as the constant
  // liar, pending ones. Repeats of a suggestion are observations each.
  std::vector<RankKey> keys;
  std::vector<double> rows;
  int told = 0;
  for (const auto& [number, trial] : trials_) {
    const Suggestion& s = suggestions_.at(trial.suggestion);
    if (!s.modelled || (!trial.result && !options_.constant_liar)) continue;
    keys.push_back(rank_key(trial.result, maximize_));
    rows.insert(rows.end(), s.coordinates.begin(), s.coordinates.end());
    told += trial.result ? 1 : 0;
  }
  const int good_count = gamma(told, options_.gamma_fraction, options_.gamma_cap);
  const Split split = split_trials(keys, good_count);
  const ParzenOptions parzen{options_.prior_weight, options_.consider_magic_clip,
                             options_.consider_endpoints, options_.multivariate,
                             options_.width_weighted_density};

  // The rows of `members`, restricted to dimensions `columns`.
  const std::size_t width = dims_.size();
  auto select = [&](const std::vector<std::size_t>& members,
                    const std::vector<std::size_t>& columns) {
    std::vector<double> out;
    out.reserve(members.size() * columns.size());
    for (std::size_t row : members)
      for (std::size_t column : columns) out.push_back(rows[row * width + column]);
    return out;
  };
  // One group of dimensions modelled jointly: all of them (multivariate), or each alone.
  std::vector<std::vector<std::size_t>> groups;
  if (options_.multivariate) {
    groups.emplace_back(width);
    std::iota(groups.back().begin(), groups.back().end(), std::size_t{0});
  } else {
    for (std::size_t j = 0; j < width; ++j) groups.push_back({j});
  }
  struct Model {
    std::vector<std::size_t> columns;
    ParzenEstimator good, bad;
  };
  std::vector<Model> models;
  for (const std::vector<std::size_t>& columns : groups) {
    std::vector<const SearchDimension*> dims;
    for (std::size_t j : columns) dims.push_back(&dims_[j]);
    models.push_back(Model{
        columns, ParzenEstimator(dims, select(split.good, columns), split.good.size(), parzen),
        ParzenEstimator(dims, select(split.bad, columns), split.bad.size(), parzen)});
  }

  const auto candidates = static_cast<std::size_t>(options_.n_ei_candidates);
  std::vector<config::Draw> constants(space_.params.size());  // the modelled ones are filled in
  for (std::size_t i = 0; i < space_.params.size(); ++i)
    if (space_.params[i].distribution == config::Distribution::constant)
      constants[i] = config::Draw{space_.params[i].values.front(), 0};
  for (int batch = 0; batch < kCandidateBatches; ++batch) {
    // Per group: candidates drawn from l, decoded to values, ranked by log l − log g.
    std::vector<std::vector<config::Draw>> draws(candidates, constants);
    std::vector<double> score(candidates, 0.0);
    for (const Model& model : models) {
      const std::size_t g = model.columns.size();
      const std::vector<double> sample = model.good.sample(rng, options_.n_ei_candidates);
      std::vector<Cell> cells(candidates * g);
      std::vector<config::Draw> group_draws(candidates * g);
      for (std::size_t c = 0; c < candidates; ++c)
        for (std::size_t k = 0; k < g; ++k) {
          const SearchDimension& d = dims_[model.columns[k]];
          group_draws[c * g + k] = d.decode(sample[c * g + k]);
          cells[c * g + k] = d.cell(group_draws[c * g + k]);
        }
      const std::vector<double> log_l = model.good.log_pdf(cells, candidates);
      const std::vector<double> log_g = model.bad.log_pdf(cells, candidates);
      if (options_.multivariate) {
        for (std::size_t c = 0; c < candidates; ++c) {
          score[c] = log_l[c] - log_g[c];
          for (std::size_t k = 0; k < g; ++k)
            draws[c][dims_[model.columns[k]].param_index()] = group_draws[c * g + k];
        }
        continue;
      }
      // Univariate: every candidate takes this parameter's best draw; ask again only when
      // that point is taken (the next batch draws anew).
      std::vector<double> ratio(candidates);
      for (std::size_t c = 0; c < candidates; ++c) ratio[c] = log_l[c] - log_g[c];
      const std::size_t best = by_score(ratio).front();
      for (std::size_t c = 0; c < candidates; ++c)
        draws[c][dims_[model.columns[0]].param_index()] = group_draws[best];
    }
    for (std::size_t c : by_score(score))
      if (is_new(draws[c])) return draws[c];
  }
  return std::nullopt;
}

}  // namespace sweep::search
