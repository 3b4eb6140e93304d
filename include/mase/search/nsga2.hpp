#pragma once
// NSGA-II (Deb et al. 2002) through pagmo (libpagmo-dev, target Pagmo::pagmo): every dimension an
// integer variable in [0, choices - 1], every objective minimized, each generation's offspring
// evaluated as one batch of trials through pagmo's batch fitness evaluation, so they run on the
// search's threads and are journaled like any other trials. A separate header: only a program
// that links pagmo includes it.

#include <mase/core/error.hpp>
#include <mase/search/sampler.hpp>
#include <mase/search/space.hpp>

#include <pagmo/algorithms/nsga2.hpp>
#include <pagmo/bfe.hpp>
#include <pagmo/population.hpp>
#include <pagmo/problem.hpp>
#include <pagmo/types.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/core.h>

namespace mase::search {

namespace detail {

// The search as a pagmo problem: one integer variable per dimension with two or more choices
// (pagmo's NSGA-II refuses a variable whose bounds are equal; single-choice dimensions stay at
// their one value); its fitness is computed in batches (below), as nsga2 does given a batch
// evaluator.
struct pagmo_search_problem {
  const search_space* space = nullptr;
  trial_batches* trials = nullptr;
  std::size_t objectives = 2;
  std::vector<std::size_t> free{};  // the dimensions with a choice to make

  point point_of(const pagmo::vector_double& x, std::size_t at) const {
    point p(space->dimensions.size(), 0);
    for (std::size_t i = 0; i < free.size(); ++i) p[free[i]] = static_cast<std::uint32_t>(std::lround(x[at + i]));
    return p;
  }

  pagmo::vector_double fitness(const pagmo::vector_double& x) const { return evaluate(x); }
  std::pair<pagmo::vector_double, pagmo::vector_double> get_bounds() const {
    pagmo::vector_double low(free.size(), 0.0), high(free.size());
    for (std::size_t i = 0; i < free.size(); ++i) high[i] = static_cast<double>(space->dimensions[free[i]].choices.size() - 1);
    return {low, high};
  }
  pagmo::vector_double::size_type get_nobj() const { return objectives; }
  pagmo::vector_double::size_type get_nix() const { return free.size(); }

  // Decision vectors, concatenated, to their fitness vectors, concatenated. A failed trial gets
  // the largest finite value in every objective (pagmo's sorting needs finite numbers).
  pagmo::vector_double evaluate(const pagmo::vector_double& xs) const {
    std::vector<point> points;
    for (std::size_t at = 0; at < xs.size(); at += free.size()) points.push_back(point_of(xs, at));
    const std::vector<objective_vector> values = trials->evaluate(points);
    pagmo::vector_double out;
    for (const objective_vector& v : values)
      for (std::size_t k = 0; k < objectives; ++k)
        out.push_back(k < v.size() && std::isfinite(v[k]) ? v[k] : std::numeric_limits<double>::max());
    return out;
  }
};

struct pagmo_batch_evaluator {
  pagmo::vector_double operator()(const pagmo::problem& p, const pagmo::vector_double& xs) const {
    return p.extract<pagmo_search_problem>()->evaluate(xs);
  }
};

}  // namespace detail

class nsga2_sampler final : public sampler {
public:
  struct options {
    std::size_t population = 20;  // rounded up to a multiple of 4 (pagmo's rule), at least 8
    double crossover = 0.95;      // simulated binary crossover probability
    double crossover_index = 10;  // its distribution index
    double mutation = 0;          // per-variable mutation probability; 0: 1 / dimensions (Deb's choice)
    double mutation_index = 50;
  };
  nsga2_sampler() = default;
  explicit nsga2_sampler(options o) : options_(o) {}
  std::string_view name() const override { return "nsga2"; }

  // The initial population, then a generation at a time, each a batch of trials, until the
  // budget cannot hold another generation.
  void drive(const search_space& space, trial_batches& trials) override {
    std::vector<std::size_t> free;
    for (std::size_t i = 0; i < space.dimensions.size(); ++i)
      if (space.dimensions[i].choices.size() > 1) free.push_back(i);
    if (free.empty()) throw error("the nsga2 sampler: every dimension of the space has one value; there is nothing to search");
    const std::size_t size = std::max<std::size_t>(8, (options_.population + 3) / 4 * 4);
    const std::size_t objectives = trials.objective_count();
    if (objectives < 2)
      throw error("the nsga2 sampler needs two or more objectives (pagmo's NSGA-II is multi-objective); use tpe for "
                  "one");
    if (trials.budget_left() < size)
      throw error(fmt::format("the nsga2 sampler's population is {} trials, more than the {} trials left; give more "
                              "trials or a smaller population",
                              size, trials.budget_left()));
    const auto seed = static_cast<unsigned>(trials.seed() ^ (trials.seed() >> 32));
    pagmo::problem problem{detail::pagmo_search_problem{&space, &trials, objectives, free}};
    const pagmo::bfe evaluator{detail::pagmo_batch_evaluator{}};
    try {
      pagmo::population population(problem, evaluator, size, seed);
      pagmo::nsga2 algorithm(1u, options_.crossover, options_.crossover_index,
                             options_.mutation > 0 ? options_.mutation : 1.0 / static_cast<double>(free.size()),
                             options_.mutation_index, seed);
      algorithm.set_bfe(evaluator);
      while (trials.budget_left() >= size) population = algorithm.evolve(population);
    } catch (const std::invalid_argument& e) {  // pagmo's word for a bad parameter
      throw error(fmt::format("nsga2 (pagmo): {}", e.what()));
    }
  }

private:
  options options_{};
};

// The nsga2 sampler with the options a config gives (the population: setup.population).
inline std::unique_ptr<sampler> make_nsga2_sampler(nsga2_sampler::options o = {}) {
  return std::make_unique<nsga2_sampler>(o);
}

}  // namespace mase::search
