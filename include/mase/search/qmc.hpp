#pragma once
// Quasi-Monte Carlo: Sobol's low-discrepancy sequence (Joe and Kuo's direction numbers, through
// Boost.Random), what Optuna's QMCSampler draws by default (qmc_type "sobol", unscrambled, from
// the sequence's first point, the origin). Point n of the sequence is the sampler's trial n; its
// coordinate d, u in [0, 1), chooses value floor(u k) of the d-th dimension with k > 1 values
// (single-valued dimensions take no coordinate). The first 2^m points put every coordinate on
// each multiple of 2^-m once, so each value of a dimension is chosen floor(2^m / k) or
// ceil(2^m / k) times: every value evenly, which random draws only approach.
//
// Optuna's QMCSampler gives categorical parameters to its random independent sampler; MASE's
// search spaces are all categorical, so there it is random search. mase maps the sequence onto
// the choices instead, the point of asking for a low-discrepancy sampler.

#include <mase/core/error.hpp>
#include <mase/search/space.hpp>
#include <mase/search/strategy.hpp>

#include <boost/random/sobol.hpp>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include <fmt/core.h>

namespace mase::search {

class qmc_sampler final : public sampler {
public:
  struct options {
    // A random digital shift (each coordinate's bits XORed with a word drawn from the search's
    // seed, as Owen-style scrambling begins): another sequence per seed with the same even
    // cover of every value. Optuna's default, and mase's, is unscrambled.
    bool scramble = false;
  };
  // Boost's table of direction numbers.
  static constexpr std::size_t max_dimensions = boost::random::default_sobol_table::max_dimension;

  qmc_sampler() = default;
  explicit qmc_sampler(options o) : options_(o) {}
  // The journal records the name, so a scrambled search is not resumed as an unscrambled one.
  std::string_view name() const override { return options_.scramble ? "qmc_scrambled" : "qmc"; }

  // Sobol point n (0 the origin) in `dimensions` coordinates, each as the 64-bit word u 2^64.
  static std::vector<std::uint64_t> sobol_point(std::size_t dimensions, std::uint64_t n) {
    std::vector<std::uint64_t> words(dimensions, 0);
    if (n == 0 || dimensions == 0) return words;
    boost::random::sobol sequence(dimensions);
    sequence.seed(n - 1);  // Boost's sequence starts at point 1: it leaves out the origin
    for (std::uint64_t& w : words) w = sequence();
    return words;
  }

  // Value floor(u k) of k, u = word 2^-64: exact for the sequence's first 2^32 points, whose
  // words have no bit below the 32nd.
  static std::uint32_t choice_of(std::uint64_t word, std::size_t k) {
    return static_cast<std::uint32_t>(((word >> 32) * static_cast<std::uint64_t>(k)) >> 32);
  }

  void drive(const search_space& space, trial_batches& trials) override {
    shift_.clear();
    if (options_.scramble) {
      random_stream words(trials.seed() ^ 0x716d63ULL);  // "qmc": apart from the batches' streams
      for (std::size_t d = 0; d < space.dimensions.size(); ++d) shift_.push_back(words.next() & ~0xffffffffULL);
    }
    sampler::drive(space, trials);
  }

  std::vector<point> ask(const search_space& space, std::span<const observation>, std::size_t first, std::size_t count,
                         random_stream&) override {
    std::vector<std::size_t> free;
    for (std::size_t i = 0; i < space.dimensions.size(); ++i)
      if (space.dimensions[i].choices.size() > 1) free.push_back(i);
    if (free.size() > max_dimensions)
      throw error(fmt::format("the qmc sampler: the space has {} dimensions with a choice; Sobol's sequence here has "
                              "direction numbers for {}; use random or tpe, or a smaller space (setup.by = \"type\")",
                              free.size(), max_dimensions));
    std::vector<point> points;
    if (free.empty()) {  // one point in all: nothing for the sequence to spread
      points.assign(count, point(space.dimensions.size(), 0));
      return points;
    }
    boost::random::sobol sequence(free.size());
    if (first > 0) sequence.seed(first - 1);
    for (std::size_t n = first; n < first + count; ++n) {
      point p(space.dimensions.size(), 0);
      for (std::size_t d = 0; d < free.size(); ++d) {
        std::uint64_t word = n == 0 ? 0 : sequence();
        if (!shift_.empty()) word ^= shift_[free[d]];
        p[free[d]] = choice_of(word, space.dimensions[free[d]].choices.size());
      }
      points.push_back(std::move(p));
    }
    return points;
  }

private:
  options options_{};
  std::vector<std::uint64_t> shift_{};  // per dimension; empty: unscrambled
};

}  // namespace mase::search
