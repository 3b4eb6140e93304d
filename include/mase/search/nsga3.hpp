#pragma once
// NSGA-III (Deb and Jain 2014), mase's nsga3 and MASE's "nsgaiii", on a categorical space as
// Optuna's NSGAIIISampler runs it on categorical parameters: the first generation random; each
// next one the children of the elite population, parents by binary tournament on dominance,
// uniform crossover
// (probability 0.9, each value from the second parent with probability 0.5), each dimension
// redrawn at random with probability 1 / dimensions; the next elite population chosen from the
// elite and the children by non-dominated sorting, the last front it reaches split by niching
// around reference points on the simplex of the normalized objectives.
//
// pagmo 2.18 (Debian 12's libpagmo-dev) has no NSGA-III, so this needs no library. Each
// generation is one batch of trials; its draws come from the batch's generator, so the search
// repeats for a seed on any number of threads and resumes from its journal.

#include <mase/core/error.hpp>
#include <mase/search/pareto.hpp>
#include <mase/search/space.hpp>
#include <mase/search/strategy.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <numeric>
#include <span>
#include <string_view>
#include <vector>

#include <fmt/core.h>

namespace mase::search {

// Das and Dennis's points on the unit simplex: every vector of `objectives` non-negative
// multiples of 1 / divisions that sum to 1, C(objectives + divisions - 1, divisions) of them.
inline std::vector<objective_vector> simplex_reference_points(std::size_t objectives, std::size_t divisions) {
  if (objectives == 0 || divisions == 0) throw error("simplex_reference_points: give one objective and one division or more");
  std::vector<objective_vector> points;
  std::vector<std::size_t> parts(objectives, 0);
  // Every composition of `divisions` into `objectives` parts, the first part largest first.
  const auto fill = [&](auto&& self, std::size_t at, std::size_t left) -> void {
    if (at + 1 == objectives) {
      parts[at] = left;
      objective_vector v(objectives);
      for (std::size_t i = 0; i < objectives; ++i) v[i] = static_cast<double>(parts[i]) / static_cast<double>(divisions);
      points.push_back(std::move(v));
      return;
    }
    for (std::size_t k = left + 1; k-- > 0;) {
      parts[at] = k;
      self(self, at + 1, left - k);
    }
  };
  fill(fill, 0, divisions);
  return points;
}

// The most divisions whose reference points fit in `population` (Deb and Jain size the
// population to the number of reference points), at least 1.
inline std::size_t nsga3_divisions(std::size_t objectives, std::size_t population) {
  const auto count = [&](std::size_t p) {  // C(objectives + p - 1, p), saturating
    double c = 1;
    for (std::size_t i = 1; i <= p; ++i) c = c * static_cast<double>(objectives - 1 + i) / static_cast<double>(i);
    return c;
  };
  std::size_t p = 1;
  while (count(p + 1) <= static_cast<double>(population)) ++p;
  return p;
}

namespace detail {

// x with E x = 1 (E square, by rows), by Gaussian elimination with partial pivoting; empty if E
// is singular.
inline std::vector<double> solve_for_ones(std::vector<std::vector<double>> e) {
  const std::size_t n = e.size();
  std::vector<double> b(n, 1.0);
  for (std::size_t col = 0; col < n; ++col) {
    std::size_t pivot = col;
    for (std::size_t r = col + 1; r < n; ++r)
      if (std::abs(e[r][col]) > std::abs(e[pivot][col])) pivot = r;
    if (!(std::abs(e[pivot][col]) > 1e-12)) return {};
    std::swap(e[pivot], e[col]);
    std::swap(b[pivot], b[col]);
    for (std::size_t r = col + 1; r < n; ++r) {
      const double f = e[r][col] / e[col][col];
      for (std::size_t c = col; c < n; ++c) e[r][c] -= f * e[col][c];
      b[r] -= f * b[col];
    }
  }
  std::vector<double> x(n);
  for (std::size_t r = n; r-- > 0;) {
    double s = b[r];
    for (std::size_t c = r + 1; c < n; ++c) s -= e[r][c] * x[c];
    x[r] = s / e[r][r];
  }
  return x;
}

}  // namespace detail

// NSGA-III's environmental selection: `keep` of `values` (every objective minimized, finite),
// returned as indices in increasing order. Whole non-dominated fronts first; the front that does
// not fit is split by niching: the objectives are translated by the ideal point and divided by
// the intercepts of the hyperplane through the extreme points (each objective's point minimizing
// the achievement scalarizing function; when the plane is degenerate, the worst value of the
// first front), each point is associated with the reference line nearest to it, and the
// reference with the fewest associated chosen points (ties at random) takes its nearest point
// from the front when it has none yet, else a random one, until `keep` are chosen.
inline std::vector<std::size_t> nsga3_select(std::span<const objective_vector> values, std::size_t keep,
                                             std::span<const objective_vector> references, random_stream& random) {
  const std::size_t n = values.size();
  std::vector<std::size_t> all(n);
  std::iota(all.begin(), all.end(), std::size_t{0});
  if (n <= keep) return all;
  const std::size_t m = values[0].size();
  const std::vector<std::size_t> rank = nondominated_ranks(values);
  std::vector<std::size_t> chosen, last, considered;  // considered: chosen and the last front
  for (std::size_t level = 0; chosen.size() < keep; ++level) {
    std::vector<std::size_t> front;
    for (std::size_t i = 0; i < n; ++i)
      if (rank[i] == level) front.push_back(i);
    if (chosen.size() + front.size() <= keep) {
      chosen.insert(chosen.end(), front.begin(), front.end());
      continue;
    }
    last = std::move(front);
    break;
  }
  if (last.empty()) {
    std::sort(chosen.begin(), chosen.end());
    return chosen;
  }
  considered = chosen;
  considered.insert(considered.end(), last.begin(), last.end());

  // Normalization over the chosen fronts and the last one.
  objective_vector ideal(m, std::numeric_limits<double>::infinity());
  for (std::size_t i : considered)
    for (std::size_t k = 0; k < m; ++k) ideal[k] = std::min(ideal[k], values[i][k]);
  const auto translated = [&](std::size_t i, std::size_t k) { return values[i][k] - ideal[k]; };
  std::vector<std::vector<double>> extremes;
  for (std::size_t axis = 0; axis < m; ++axis) {
    std::size_t best = considered[0];
    double best_asf = std::numeric_limits<double>::infinity();
    for (std::size_t i : considered) {
      double asf = 0;
      for (std::size_t k = 0; k < m; ++k) asf = std::max(asf, translated(i, k) / (k == axis ? 1.0 : 1e-6));
      if (asf < best_asf) best_asf = asf, best = i;
    }
    std::vector<double> row(m);
    for (std::size_t k = 0; k < m; ++k) row[k] = translated(best, k);
    extremes.push_back(std::move(row));
  }
  std::vector<double> intercept(m, 0.0);
  const std::vector<double> plane = detail::solve_for_ones(extremes);
  bool degenerate = plane.empty();
  for (std::size_t k = 0; k < m && !degenerate; ++k) {
    intercept[k] = 1.0 / plane[k];
    degenerate = !(plane[k] > 0) || !std::isfinite(intercept[k]) || intercept[k] < 1e-10;
  }
  if (degenerate)
    for (std::size_t k = 0; k < m; ++k) {
      intercept[k] = 0;
      for (std::size_t i : considered)
        if (rank[i] == 0) intercept[k] = std::max(intercept[k], translated(i, k));
      if (!(intercept[k] > 1e-10))
        for (std::size_t i : considered) intercept[k] = std::max(intercept[k], translated(i, k));
      if (!(intercept[k] > 1e-10)) intercept[k] = 1;
    }

  // Association: the reference line nearest to each point (perpendicular distance).
  std::vector<std::size_t> niche(n, 0);
  std::vector<double> distance(n, 0.0);
  for (std::size_t i : considered) {
    double best = std::numeric_limits<double>::infinity();
    for (std::size_t r = 0; r < references.size(); ++r) {
      double dot = 0, norm = 0, length = 0;
      for (std::size_t k = 0; k < m; ++k) {
        const double f = translated(i, k) / intercept[k];
        dot += f * references[r][k];
        norm += references[r][k] * references[r][k];
        length += f * f;
      }
      const double d = std::sqrt(std::max(0.0, length - dot * dot / norm));
      if (d < best) best = d, niche[i] = r;
    }
    distance[i] = best;
  }

  // Niching: fill from the last front, the least crowded reference first.
  std::vector<std::size_t> count(references.size(), 0);
  for (std::size_t i : chosen) ++count[niche[i]];
  std::vector<bool> excluded(references.size(), false), taken(n, false);
  while (chosen.size() < keep) {
    std::size_t fewest = std::numeric_limits<std::size_t>::max();
    for (std::size_t r = 0; r < references.size(); ++r)
      if (!excluded[r]) fewest = std::min(fewest, count[r]);
    std::vector<std::size_t> least;
    for (std::size_t r = 0; r < references.size(); ++r)
      if (!excluded[r] && count[r] == fewest) least.push_back(r);
    const std::size_t r = least[random.below(least.size())];
    std::vector<std::size_t> members;
    for (std::size_t i : last)
      if (!taken[i] && niche[i] == r) members.push_back(i);
    if (members.empty()) {
      excluded[r] = true;
      continue;
    }
    std::size_t pick = members[0];
    if (count[r] == 0) {
      for (std::size_t i : members)
        if (distance[i] < distance[pick]) pick = i;
    } else {
      pick = members[random.below(members.size())];
    }
    taken[pick] = true;
    chosen.push_back(pick);
    ++count[r];
  }
  std::sort(chosen.begin(), chosen.end());
  return chosen;
}

class nsga3_sampler final : public sampler {
public:
  struct options {
    std::size_t population = 20;  // trials per generation (setup.population)
    double crossover = 0.9;       // Optuna's crossover_prob
    double swapping = 0.5;        // Optuna's swapping_prob: each value from the second parent
    double mutation = 0;          // per-dimension redraw probability; 0: 1 / dimensions with a choice
    std::size_t divisions = 0;    // reference points per objective axis; 0: the most that fit in the population
  };
  nsga3_sampler() = default;
  explicit nsga3_sampler(options o) : options_(o) {}
  std::string_view name() const override { return "nsga3"; }

  void drive(const search_space& space, trial_batches& trials) override {
    std::vector<std::size_t> free;
    for (std::size_t i = 0; i < space.dimensions.size(); ++i)
      if (space.dimensions[i].choices.size() > 1) free.push_back(i);
    if (free.empty()) throw error("the nsga3 sampler: every dimension of the space has one value; there is nothing to search");
    const std::size_t objectives = trials.objective_count();
    if (objectives < 2)
      throw error("the nsga3 sampler needs two or more objectives (NSGA-III is multi-objective); use tpe for one");
    const std::size_t size = options_.population;
    if (size < 2) throw error("the nsga3 sampler: the population must be 2 trials or more");
    if (trials.budget_left() < size)
      throw error(fmt::format("the nsga3 sampler's population is {} trials, more than the {} trials left; give more "
                              "trials or a smaller population",
                              size, trials.budget_left()));
    const std::vector<objective_vector> references = simplex_reference_points(
        objectives, options_.divisions > 0 ? options_.divisions : nsga3_divisions(objectives, size));
    const double mutation = options_.mutation > 0 ? options_.mutation : 1.0 / static_cast<double>(free.size());

    // The elite starts from the trials before this sampler's (the enqueued ones).
    std::vector<observation> elite(trials.history().begin(), trials.history().end());
    for (std::uint64_t generation = 0; trials.budget_left() >= size; ++generation) {
      random_stream random = batch_stream(trials.seed(), generation);
      const auto begin = std::chrono::steady_clock::now();
      std::vector<point> children;
      for (std::size_t k = 0; k < size; ++k)
        children.push_back(generation == 0 || elite.empty() ? random_point(space, random)
                                                            : child(space, free, elite, mutation, random));
      trials.add_sampling_time(std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count(),
                               children.size());
      const std::vector<objective_vector> values = trials.evaluate(children);

      const auto select_begin = std::chrono::steady_clock::now();
      std::vector<observation> pool = elite;
      for (std::size_t k = 0; k < children.size(); ++k)
        if (!values[k].empty()) pool.push_back({0, children[k], finite(values[k])});
      std::vector<objective_vector> pool_values;
      for (const observation& o : pool) pool_values.push_back(o.values);
      elite.clear();
      for (std::size_t i : nsga3_select(pool_values, size, references, random)) elite.push_back(pool[i]);
      trials.add_sampling_time(std::chrono::duration<double>(std::chrono::steady_clock::now() - select_begin).count(), 0);
    }
  }

private:
  static point random_point(const search_space& space, random_stream& random) {
    point p(space.dimensions.size());
    for (std::size_t i = 0; i < p.size(); ++i)
      p[i] = static_cast<std::uint32_t>(random.below(space.dimensions[i].choices.size()));
    return p;
  }

  // NSGA-III's sorting needs finite numbers: a NaN or infinite value is the largest finite one.
  static objective_vector finite(objective_vector v) {
    for (double& x : v)
      if (!std::isfinite(x)) x = std::numeric_limits<double>::max();
    return v;
  }

  // Binary tournament: of two members drawn at random (with replacement), one that dominates
  // the other, else the second. `skip`: a member not to return (the first parent).
  static std::size_t tournament(const std::vector<observation>& elite, random_stream& random, std::size_t skip) {
    const auto draw = [&] {
      if (elite.size() == 1) return std::size_t{0};
      for (;;) {
        const std::size_t i = random.below(elite.size());
        if (i != skip) return i;
      }
    };
    const std::size_t a = draw(), b = draw();
    return dominates(elite[a].values, elite[b].values) ? a : b;
  }

  point child(const search_space& space, const std::vector<std::size_t>& free, const std::vector<observation>& elite,
              double mutation, random_stream& random) const {
    const std::size_t first = tournament(elite, random, elite.size());
    const std::size_t second = tournament(elite, random, first);
    point p = elite[first].choices;
    if (random.uniform() < options_.crossover)
      for (std::size_t d : free)
        if (random.uniform() < options_.swapping) p[d] = elite[second].choices[d];
    for (std::size_t d : free)
      if (random.uniform() < mutation) p[d] = static_cast<std::uint32_t>(random.below(space.dimensions[d].choices.size()));
    return p;
  }

  options options_{};
};

}  // namespace mase::search
