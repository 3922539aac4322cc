/*
 * pareto.h — the geometry of several objectives: dominance, non-dominated sorting, crowding
 * distance, hypervolume and the subset of a front that keeps the most of it.
 *
 * Every objective here is minimised: a caller negates the values of maximised metrics first, so
 * that one rule serves every mix of goals. A point is a vector of finite values, all of the same
 * length; a caller keeps NaN and infinite results out (they rank with the failed trials).
 * Multi-objective TPE (its good set and its weights), NSGA-II (its survivors) and rank-based
 * early stopping all read these functions; none of them computes a front on its own.
 */
#pragma once

#include <cstddef>
#include <vector>

namespace sweep::search {

using ObjectivePoint = std::vector<double>;

// a dominates b: a is no worse in every objective and better in at least one.
bool dominates(const ObjectivePoint& a, const ObjectivePoint& b);

// The non-dominated rank of each point: 0 for the Pareto front, 1 for the front of what is left
// once it is removed, and so on (Deb's fast non-dominated sorting). Equal points share a rank.
std::vector<int> nondominated_ranks(const std::vector<ObjectivePoint>& points);

// The indices of the points of rank 0, in input order.
std::vector<std::size_t> pareto_front(const std::vector<ObjectivePoint>& points);

// NSGA-II's crowding distance of each point within one front: the sum over objectives of the gap
// between its two neighbours in that objective, scaled by the objective's range; the extremes of
// each objective get +infinity, so that a front's ends always survive.
std::vector<double> crowding_distance(const std::vector<ObjectivePoint>& front);

// The volume of the region dominated by the points and bounded by `reference` (which every point
// must be strictly better than in each objective; points that are not are left out). Exact, by
// the WFG algorithm (While, Bradstreet and Barone 2012): the sum of each point's exclusive
// volume after sorting by the first objective; two objectives by a sweep.
double hypervolume(const std::vector<ObjectivePoint>& points, const ObjectivePoint& reference);

// Each point's exclusive contribution: hypervolume(all) − hypervolume(all but it).
std::vector<double> hypervolume_contributions(const std::vector<ObjectivePoint>& points,
                                              const ObjectivePoint& reference);

// The reference point of a set: per objective, the worst value pushed outwards by 10% of its
// magnitude (1.1·w when w > 0, 0.9·w when w < 0, a small positive number when w = 0), Optuna's
// rule, so that the worst points still contribute a volume.
ObjectivePoint reference_point(const std::vector<ObjectivePoint>& points);

// `count` indices of `points` chosen greedily, each step taking the point that adds the most
// hypervolume to those already chosen (the hypervolume subset selection used to break ties in
// the last front that only partly fits); ties go to the lower index. All when count >= size.
std::vector<std::size_t> select_by_hypervolume(const std::vector<ObjectivePoint>& points,
                                               std::size_t count, const ObjectivePoint& reference);

}  // namespace sweep::search
