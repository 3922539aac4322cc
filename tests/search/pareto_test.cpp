// pareto.h: dominance, ranks, crowding distance, and exact hypervolume checked against counting
// unit cells for integer points in 2 to 4 objectives.
#include "sweep/search/pareto.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

namespace sweep::search {
namespace {

TEST(Pareto, DominanceNeedsOneStrictlyBetterObjective) {
  EXPECT_TRUE(dominates({1, 2}, {1, 3}));
  EXPECT_FALSE(dominates({1, 2}, {1, 2}));
  EXPECT_FALSE(dominates({1, 3}, {2, 2}));
  EXPECT_FALSE(dominates({2, 2}, {1, 3}));
}

TEST(Pareto, RanksPeelFrontsAndEqualPointsShareARank) {
  const std::vector<ObjectivePoint> points = {{1, 5}, {2, 2}, {5, 1}, {3, 3},
                                              {2, 2}, {6, 6}, {4, 4}};
  EXPECT_EQ(nondominated_ranks(points), (std::vector<int>{0, 0, 0, 1, 0, 3, 2}));
  EXPECT_EQ(pareto_front(points), (std::vector<std::size_t>{0, 1, 2, 4}));
  EXPECT_TRUE(nondominated_ranks({}).empty());
}

TEST(Pareto, CrowdingDistanceKeepsTheEnds) {
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<ObjectivePoint> front = {{0, 4}, {1, 3}, {3, 1}, {4, 0}};
  const std::vector<double> d = crowding_distance(front);
  EXPECT_EQ(d[0], inf);
  EXPECT_EQ(d[3], inf);
  EXPECT_DOUBLE_EQ(d[1], 3.0 / 4 + 3.0 / 4);
  EXPECT_DOUBLE_EQ(d[2], 3.0 / 4 + 3.0 / 4);
  EXPECT_EQ(crowding_distance({{1, 1}, {2, 0}}), (std::vector<double>{inf, inf}));
}

TEST(Pareto, HypervolumeOfHandCases) {
  EXPECT_DOUBLE_EQ(hypervolume({{1, 3}, {2, 1}}, {4, 4}), 7);
  EXPECT_DOUBLE_EQ(hypervolume({{1, 1, 1}}, {2, 3, 4}), 6);
  // Two boxes of volume 4 overlapping in a 1x1x2 one.
  EXPECT_DOUBLE_EQ(hypervolume({{0, 1, 0}, {1, 0, 0}}, {2, 2, 2}), 4 + 4 - 2);
  // Points on or beyond the reference add nothing.
  EXPECT_DOUBLE_EQ(hypervolume({{1, 1}, {4, 0}, {0, 5}}, {4, 4}), 9);
  EXPECT_DOUBLE_EQ(hypervolume({}, {1, 1}), 0);
}

// The number of unit cells [c, c+1) of the box [0, reference) that some point dominates.
double counted_volume(const std::vector<ObjectivePoint>& points, int side, std::size_t dims) {
  double cells = 0;
  std::vector<int> c(dims, 0);
  while (true) {
    bool covered = false;
    for (const ObjectivePoint& p : points) {
      bool all = true;
      for (std::size_t j = 0; j < dims && all; ++j) all = p[j] <= c[j];
      covered = covered || all;
    }
    cells += covered;
    std::size_t j = 0;
    while (j < dims && ++c[j] == side) c[j++] = 0;
    if (j == dims) return cells;
  }
}

TEST(Pareto, HypervolumeMatchesCountedCellsInTwoToFourObjectives) {
  std::mt19937 rng(11);
  const int side = 7;
  std::uniform_int_distribution<int> coordinate(0, side - 1);
  for (std::size_t dims = 2; dims <= 4; ++dims)
    for (int round = 0; round < 40; ++round) {
      std::vector<ObjectivePoint> points(1 + round % 9, ObjectivePoint(dims));
      for (ObjectivePoint& p : points)
        for (double& x : p) x = coordinate(rng);
      const ObjectivePoint reference(dims, side);
      ASSERT_DOUBLE_EQ(hypervolume(points, reference), counted_volume(points, side, dims))
          << "dims " << dims << " round " << round;
      // Each contribution is the volume lost without that point.
      const std::vector<double> contribution = hypervolume_contributions(points, reference);
      for (std::size_t i = 0; i < points.size(); ++i) {
        std::vector<ObjectivePoint> rest = points;
        rest.erase(rest.begin() + static_cast<std::ptrdiff_t>(i));
        ASSERT_DOUBLE_EQ(contribution[i],
                         counted_volume(points, side, dims) - counted_volume(rest, side, dims));
      }
    }
}

TEST(Pareto, ReferencePointPushesTheWorstOutwards) {
  EXPECT_EQ(reference_point({{1, -2, 0}, {3, -4, 0}}),
            (ObjectivePoint{3.3000000000000003, -1.8, 1e-12}));
}

TEST(Pareto, GreedySelectionTakesTheLargestGainsFirst) {
  // (0,3) and (3,0) each cover 1x4 strips; (1,1) covers 3x3 = 9 and goes first.
  const std::vector<ObjectivePoint> points = {{0, 3}, {1, 1}, {3, 0}, {2, 2}};
  EXPECT_EQ(select_by_hypervolume(points, 1, {4, 4}), (std::vector<std::size_t>{1}));
  EXPECT_EQ(select_by_hypervolume(points, 3, {4, 4}), (std::vector<std::size_t>{1, 0, 2}));
  EXPECT_EQ(select_by_hypervolume(points, 9, {4, 4}).size(), 4u);
}

}  // namespace
}  // namespace sweep::search
