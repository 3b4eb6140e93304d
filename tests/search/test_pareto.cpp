// Pareto dominance, ranks, crowding and hypervolume, against definitions computed another way:
// the hypervolume by inclusion-exclusion over every subset of points (exact), ranks and the
// front by their definitions, crowding distances by hand.
#include <mase/search/pareto.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <cstdint>
#include <random>
#include <vector>

using namespace mase::search;

namespace {

// The union of the boxes [p, reference] by inclusion-exclusion: the sum over non-empty subsets S
// of (-1)^(|S|+1) times the volume of the box from S's componentwise maximum to the reference.
double hypervolume_by_inclusion_exclusion(const std::vector<objective_vector>& points, const objective_vector& reference) {
  double total = 0;
  const std::size_t n = points.size();
  for (std::uint32_t mask = 1; mask < (1u << n); ++mask) {
    objective_vector corner(reference.size(), -1e300);
    int members = 0;
    for (std::size_t i = 0; i < n; ++i)
      if (mask & (1u << i)) {
        ++members;
        for (std::size_t k = 0; k < reference.size(); ++k) corner[k] = std::max(corner[k], points[i][k]);
      }
    double volume = 1;
    for (std::size_t k = 0; k < reference.size(); ++k) volume *= std::max(0.0, reference[k] - corner[k]);
    total += (members % 2 == 1 ? 1 : -1) * volume;
  }
  return total;
}

std::vector<objective_vector> random_points(std::mt19937& rng, std::size_t n, std::size_t dims) {
  std::uniform_int_distribution<int> grid(0, 9);  // on a grid, so ties and equal points occur
  std::vector<objective_vector> points(n, objective_vector(dims));
  for (auto& p : points)
    for (double& v : p) v = grid(rng) / 2.0;
  return points;
}

}  // namespace

TEST_CASE("hypervolume: hand-computed fronts") {
  // Two points in 2-D against (4, 4): boxes 3x1 and 1x3 overlapping in 1x1: 5.
  CHECK(hypervolume(std::vector<objective_vector>{{1, 3}, {3, 1}}, {4, 4}) == 5.0);
  // A dominated point adds nothing; a point outside the reference adds nothing.
  CHECK(hypervolume(std::vector<objective_vector>{{1, 3}, {3, 1}, {3, 3}, {5, 0}}, {4, 4}) == 5.0);
  // One point in 3-D: a box.
  CHECK(hypervolume(std::vector<objective_vector>{{1, 2, 3}}, {2, 4, 7}) == 1.0 * 2 * 4);
  CHECK(hypervolume(std::vector<objective_vector>{}, {1, 1}) == 0.0);
}

TEST_CASE("hypervolume equals inclusion-exclusion on random sets in 1 to 4 objectives") {
  std::mt19937 rng(7);
  for (std::size_t dims = 1; dims <= 4; ++dims)
    for (int round = 0; round < 40; ++round) {
      const std::vector<objective_vector> points = random_points(rng, 1 + round % 9, dims);
      const objective_vector reference(dims, 5.0);
      INFO("dims " << dims << ", round " << round);
      CHECK(hypervolume(points, reference) == Approx(hypervolume_by_inclusion_exclusion(points, reference)).margin(1e-9));
    }
}

TEST_CASE("non-dominated ranks and the front match their definitions") {
  std::mt19937 rng(11);
  for (int round = 0; round < 30; ++round) {
    const std::vector<objective_vector> points = random_points(rng, 12, 2 + round % 2);
    const std::vector<std::size_t> rank = nondominated_ranks(points);
    for (std::size_t i = 0; i < points.size(); ++i) {
      // Rank r: dominated by some point of rank r - 1 (if r > 0), by none of rank >= r.
      bool by_previous = rank[i] == 0;
      for (std::size_t j = 0; j < points.size(); ++j) {
        if (!dominates(points[j], points[i])) continue;
        CHECK(rank[j] < rank[i]);
        by_previous = by_previous || rank[j] + 1 == rank[i];
      }
      CHECK(by_previous);
    }
    const std::vector<std::size_t> front = pareto_front(points);
    for (std::size_t i = 0; i < points.size(); ++i) {
      const bool dominated = std::any_of(points.begin(), points.end(), [&](const auto& p) { return dominates(p, points[i]); });
      CHECK((std::find(front.begin(), front.end(), i) != front.end()) == !dominated);
    }
  }
}

TEST_CASE("dominance: equal points do not dominate each other") {
  CHECK_FALSE(dominates(objective_vector{1, 2}, objective_vector{1, 2}));
  CHECK(dominates(objective_vector{1, 2}, objective_vector{1, 3}));
  CHECK_FALSE(dominates(objective_vector{0, 3}, objective_vector{1, 2}));
}

TEST_CASE("crowding distances: boundaries infinite, inner points the normalized side lengths") {
  const std::vector<objective_vector> points{{0, 4}, {1, 2}, {2, 1}, {4, 0}};
  const std::vector<std::size_t> members{0, 1, 2, 3};
  const std::vector<double> d = crowding_distances(points, members);
  CHECK(d[0] == std::numeric_limits<double>::infinity());
  CHECK(d[3] == std::numeric_limits<double>::infinity());
  // Point 1: neighbours 0 and 2: (2 - 0)/4 + (4 - 1)/4; point 2: (4 - 1)/4 + (2 - 0)/4.
  CHECK(d[1] == Approx(2.0 / 4 + 3.0 / 4));
  CHECK(d[2] == Approx(3.0 / 4 + 2.0 / 4));
}

TEST_CASE("crowding distances stay numbers when an objective is infinite") {
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<objective_vector> points{{0, inf}, {1, 2}, {2, 1}, {3, inf}};
  const std::vector<std::size_t> members{0, 1, 2, 3};
  for (double d : crowding_distances(points, members)) CHECK_FALSE(std::isnan(d));
}
