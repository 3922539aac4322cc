/*
 * pareto.cpp — dominance, non-dominated sorting, crowding distance and exact hypervolume (WFG).
 */
#include "sweep/search/pareto.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace sweep::search {
namespace {

// The volume between one point and the reference (zero when the point is not strictly better).
double box_volume(const ObjectivePoint& p, const ObjectivePoint& reference) {
  double v = 1;
  for (std::size_t j = 0; j < p.size(); ++j) v *= std::max(0.0, reference[j] - p[j]);
  return v;
}

bool inside(const ObjectivePoint& p, const ObjectivePoint& reference) {
  for (std::size_t j = 0; j < p.size(); ++j)
    if (!(p[j] < reference[j])) return false;
  return true;
}

// The points no other point dominates, one of each group of equal points.
std::vector<ObjectivePoint> nondominated_unique(std::vector<ObjectivePoint> points) {
  std::sort(points.begin(), points.end());
  points.erase(std::unique(points.begin(), points.end()), points.end());
  std::vector<ObjectivePoint> kept;
  for (std::size_t i = 0; i < points.size(); ++i) {
    bool dominated = false;
    for (std::size_t k = 0; k < points.size() && !dominated; ++k)
      dominated = k != i && dominates(points[k], points[i]);
    if (!dominated) kept.push_back(points[i]);
  }
  return kept;
}

double hypervolume_2d(std::vector<ObjectivePoint> points, const ObjectivePoint& reference) {
  std::sort(points.begin(), points.end());  // first objective ascending, then second
  double area = 0, lowest = reference[1];
  for (const ObjectivePoint& p : points) {
    if (p[1] >= lowest) continue;
    area += (reference[0] - p[0]) * (lowest - p[1]);
    lowest = p[1];
  }
  return area;
}

// WFG over points that are all inside the reference box.
double wfg(std::vector<ObjectivePoint> points, const ObjectivePoint& reference) {
  if (points.empty()) return 0;
  if (points.size() == 1) return box_volume(points[0], reference);
  if (reference.size() == 1) {
    double best = points[0][0];
    for (const ObjectivePoint& p : points) best = std::min(best, p[0]);
    return reference[0] - best;
  }
  if (reference.size() == 2) return hypervolume_2d(std::move(points), reference);
  // Sorting by the first objective makes each limited set small: the points after k, each cut
  // back to what k does not already cover.
  std::sort(points.begin(), points.end());
  double volume = 0;
  for (std::size_t k = 0; k < points.size(); ++k) {
    std::vector<ObjectivePoint> limited;
    limited.reserve(points.size() - k - 1);
    for (std::size_t i = k + 1; i < points.size(); ++i) {
      ObjectivePoint q(points[i].size());
      for (std::size_t j = 0; j < q.size(); ++j) q[j] = std::max(points[k][j], points[i][j]);
      limited.push_back(std::move(q));
    }
    volume +=
        box_volume(points[k], reference) - wfg(nondominated_unique(std::move(limited)), reference);
  }
  return volume;
}

// The volume `p` adds to `others`: its box less the part of it they already cover.
double exclusive_volume(const ObjectivePoint& p, const std::vector<ObjectivePoint>& others,
                        const ObjectivePoint& reference) {
  if (!inside(p, reference)) return 0;
  std::vector<ObjectivePoint> limited;
  limited.reserve(others.size());
  for (const ObjectivePoint& o : others) {
    if (!inside(o, reference)) continue;
    ObjectivePoint q(p.size());
    for (std::size_t j = 0; j < q.size(); ++j) q[j] = std::max(p[j], o[j]);
    limited.push_back(std::move(q));
  }
  return box_volume(p, reference) - wfg(nondominated_unique(std::move(limited)), reference);
}

}  // namespace

bool dominates(const ObjectivePoint& a, const ObjectivePoint& b) {
  bool better = false;
  for (std::size_t j = 0; j < a.size(); ++j) {
    if (a[j] > b[j]) return false;
    if (a[j] < b[j]) better = true;
  }
  return better;
}

std::vector<int> nondominated_ranks(const std::vector<ObjectivePoint>& points) {
  const std::size_t n = points.size();
  std::vector<std::vector<std::size_t>> dominated_by_me(n);
  std::vector<int> dominators(n, 0), rank(n, 0);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t k = 0; k < n; ++k) {
      if (i == k) continue;
      if (dominates(points[i], points[k]))
        dominated_by_me[i].push_back(k);
      else if (dominates(points[k], points[i]))
        ++dominators[i];
    }
  std::vector<std::size_t> front;
  for (std::size_t i = 0; i < n; ++i)
    if (dominators[i] == 0) front.push_back(i);
  for (int r = 0; !front.empty(); ++r) {
    std::vector<std::size_t> next;
    for (std::size_t i : front) {
      rank[i] = r;
      for (std::size_t k : dominated_by_me[i])
        if (--dominators[k] == 0) next.push_back(k);
    }
    front = std::move(next);
  }
  return rank;
}

std::vector<std::size_t> pareto_front(const std::vector<ObjectivePoint>& points) {
  const std::vector<int> rank = nondominated_ranks(points);
  std::vector<std::size_t> front;
  for (std::size_t i = 0; i < rank.size(); ++i)
    if (rank[i] == 0) front.push_back(i);
  return front;
}

std::vector<double> crowding_distance(const std::vector<ObjectivePoint>& front) {
  const std::size_t n = front.size();
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> distance(n, 0);
  if (n <= 2) return std::vector<double>(n, inf);
  std::vector<std::size_t> order(n);
  for (std::size_t j = 0; j < front[0].size(); ++j) {
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return front[a][j] < front[b][j]; });
    const double range = front[order.back()][j] - front[order.front()][j];
    distance[order.front()] = inf;
    distance[order.back()] = inf;
    if (range <= 0) continue;
    for (std::size_t k = 1; k + 1 < n; ++k)
      distance[order[k]] += (front[order[k + 1]][j] - front[order[k - 1]][j]) / range;
  }
  return distance;
}

double hypervolume(const std::vector<ObjectivePoint>& points, const ObjectivePoint& reference) {
  std::vector<ObjectivePoint> kept;
  for (const ObjectivePoint& p : points)
    if (inside(p, reference)) kept.push_back(p);
  return wfg(nondominated_unique(std::move(kept)), reference);
}

std::vector<double> hypervolume_contributions(const std::vector<ObjectivePoint>& points,
                                              const ObjectivePoint& reference) {
  std::vector<double> contribution(points.size(), 0);
  std::vector<ObjectivePoint> others;
  for (std::size_t i = 0; i < points.size(); ++i) {
    others.clear();
    for (std::size_t k = 0; k < points.size(); ++k)
      if (k != i) others.push_back(points[k]);
    contribution[i] = exclusive_volume(points[i], others, reference);
  }
  return contribution;
}

ObjectivePoint reference_point(const std::vector<ObjectivePoint>& points) {
  if (points.empty()) return {};
  ObjectivePoint worst = points[0];
  for (const ObjectivePoint& p : points)
    for (std::size_t j = 0; j < worst.size(); ++j) worst[j] = std::max(worst[j], p[j]);
  for (double& w : worst) w = w == 0 ? 1e-12 : std::max(1.1 * w, 0.9 * w);
  return worst;
}

std::vector<std::size_t> select_by_hypervolume(const std::vector<ObjectivePoint>& points,
                                               std::size_t count, const ObjectivePoint& reference) {
  std::vector<std::size_t> chosen;
  if (count >= points.size()) {
    chosen.resize(points.size());
    std::iota(chosen.begin(), chosen.end(), std::size_t{0});
    return chosen;
  }
  std::vector<bool> taken(points.size(), false);
  std::vector<ObjectivePoint> chosen_points;
  while (chosen.size() < count) {
    std::size_t best = points.size();
    double best_gain = -1;
    for (std::size_t i = 0; i < points.size(); ++i) {
      if (taken[i]) continue;
      const double gain = exclusive_volume(points[i], chosen_points, reference);
      if (gain > best_gain) best = i, best_gain = gain;
    }
    taken[best] = true;
    chosen.push_back(best);
    chosen_points.push_back(points[best]);
  }
  return chosen;
}

}  // namespace sweep::search
