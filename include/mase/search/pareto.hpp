#pragma once
// Pareto dominance over objective vectors, every objective minimized (a maximized objective is
// negated first): the front, non-dominated ranks (NSGA-II's sort), crowding distances and the
// exact hypervolume.

#include <mase/core/error.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <numeric>
#include <span>
#include <vector>

#include <fmt/core.h>

namespace mase::search {

using objective_vector = std::vector<double>;

// a is no worse than b everywhere and better somewhere.
inline bool dominates(std::span<const double> a, std::span<const double> b) {
  bool better = false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i] > b[i]) return false;
    if (a[i] < b[i]) better = true;
  }
  return better;
}

// The rank of each vector: 0 for the non-dominated, 1 for those only rank 0 dominates, …
inline std::vector<std::size_t> nondominated_ranks(std::span<const objective_vector> values) {
  const std::size_t n = values.size();
  std::vector<std::size_t> rank(n, 0), dominated_by(n, 0);
  std::vector<std::vector<std::size_t>> dominates_list(n);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = i + 1; j < n; ++j) {
      if (dominates(values[i], values[j])) {
        dominates_list[i].push_back(j);
        ++dominated_by[j];
      } else if (dominates(values[j], values[i])) {
        dominates_list[j].push_back(i);
        ++dominated_by[i];
      }
    }
  std::vector<std::size_t> current;
  for (std::size_t i = 0; i < n; ++i)
    if (dominated_by[i] == 0) current.push_back(i);
  for (std::size_t level = 0; !current.empty(); ++level) {
    std::vector<std::size_t> next;
    for (std::size_t i : current) {
      rank[i] = level;
      for (std::size_t j : dominates_list[i])
        if (--dominated_by[j] == 0) next.push_back(j);
    }
    current = std::move(next);
  }
  return rank;
}

// The indices of the non-dominated vectors, in input order (equal vectors are all kept).
inline std::vector<std::size_t> pareto_front(std::span<const objective_vector> values) {
  const std::vector<std::size_t> rank = nondominated_ranks(values);
  std::vector<std::size_t> front;
  for (std::size_t i = 0; i < rank.size(); ++i)
    if (rank[i] == 0) front.push_back(i);
  return front;
}

// NSGA-II's crowding distance of each member of `members` (indices into `values`), which should
// share one rank: the boundary points of each objective are infinitely far.
inline std::vector<double> crowding_distances(std::span<const objective_vector> values,
                                              std::span<const std::size_t> members) {
  const std::size_t m = members.size();
  std::vector<double> distance(m, 0.0);
  if (m == 0) return distance;
  std::vector<std::size_t> order(m);
  for (std::size_t k = 0; k < values[members[0]].size(); ++k) {
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return values[members[a]][k] < values[members[b]][k]; });
    const double low = values[members[order.front()]][k], high = values[members[order.back()]][k];
    distance[order.front()] = distance[order.back()] = std::numeric_limits<double>::infinity();
    if (!(high > low) || !std::isfinite(high - low)) continue;  // one value, or an infinite one: no spread
    for (std::size_t i = 1; i + 1 < m; ++i)
      distance[order[i]] += (values[members[order[i + 1]]][k] - values[members[order[i - 1]]][k]) / (high - low);
  }
  return distance;
}

namespace detail {

// The volume dominated by `points` (all within the reference) and bounded by `reference`, in
// the first `dims` coordinates: slice along the last coordinate (HSO), exact in 1 and 2.
inline double hypervolume_of(std::vector<objective_vector> points, const objective_vector& reference,
                             std::size_t dims) {
  if (points.empty()) return 0;
  if (dims == 1) {
    double best = reference[0];
    for (const objective_vector& p : points) best = std::min(best, p[0]);
    return reference[0] - best;
  }
  const std::size_t last = dims - 1;
  std::sort(points.begin(), points.end(),
            [&](const objective_vector& a, const objective_vector& b) { return a[last] < b[last]; });
  if (dims == 2) {
    double volume = 0, lowest_x = reference[0];
    for (std::size_t i = 0; i < points.size(); ++i) {
      lowest_x = std::min(lowest_x, points[i][0]);
      const double next = i + 1 < points.size() ? points[i + 1][1] : reference[1];
      volume += (reference[0] - lowest_x) * (next - points[i][1]);
    }
    return volume;
  }
  double volume = 0;
  std::vector<objective_vector> slice;
  for (std::size_t i = 0; i < points.size(); ++i) {
    slice.push_back(points[i]);
    const double next = i + 1 < points.size() ? points[i + 1][last] : reference[last];
    if (next > points[i][last]) volume += hypervolume_of(slice, reference, last) * (next - points[i][last]);
  }
  return volume;
}

}  // namespace detail

// The volume that `values` dominate, bounded by `reference` (every objective minimized; points
// not strictly better than the reference everywhere add nothing). Exact; exponential in the
// number of objectives, which is small.
inline double hypervolume(std::span<const objective_vector> values, const objective_vector& reference) {
  std::vector<objective_vector> inside;
  for (const objective_vector& v : values) {
    if (v.size() != reference.size())
      throw error(fmt::format("hypervolume: a point has {} objectives; the reference has {}", v.size(),
                              reference.size()));
    bool within = true;
    for (std::size_t i = 0; i < v.size(); ++i) within = within && v[i] < reference[i];
    if (within) inside.push_back(v);
  }
  if (reference.empty()) return 0;
  return detail::hypervolume_of(std::move(inside), reference, reference.size());
}

}  // namespace mase::search
