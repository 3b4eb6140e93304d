#pragma once
// Samplers: where the next trials go, from the trials that finished. Random, grid (MASE's
// "brute-force") and TPE, the Tree-structured Parzen Estimator (Bergstra et al. 2011) as Optuna
// runs it by default: independent per dimension, every dimension categorical; Sobol's sequence
// (qmc.hpp) and NSGA-III (nsga3.hpp); make_sampler by the names a config gives. The contract
// they follow (batches, generators, trial_batches) is in strategy.hpp.

#include <mase/search/pareto.hpp>
#include <mase/search/space.hpp>
#include <mase/search/nsga3.hpp>
#include <mase/search/qmc.hpp>
#include <mase/search/strategy.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <numeric>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace mase::search {

// Every index uniformly and independently.
class random_sampler final : public sampler {
public:
  std::string_view name() const override { return "random"; }
  static point draw(const search_space& space, random_stream& random) {
    point p(space.dimensions.size());
    for (std::size_t i = 0; i < p.size(); ++i)
      p[i] = static_cast<std::uint32_t>(random.below(space.dimensions[i].choices.size()));
    return p;
  }
  std::vector<point> ask(const search_space& space, std::span<const observation>, std::size_t, std::size_t count,
                         random_stream& random) override {
    std::vector<point> points;
    for (std::size_t k = 0; k < count; ++k) points.push_back(draw(space, random));
    return points;
  }
};

// Every point in turn (MASE's brute-force), the last dimension fastest; trial n is point n.
class grid_sampler final : public sampler {
public:
  std::string_view name() const override { return "grid"; }
  std::vector<point> ask(const search_space& space, std::span<const observation>, std::size_t first,
                         std::size_t count, random_stream&) override {
    std::vector<point> points;
    for (std::size_t n = first; n < first + count && static_cast<double>(n) < space.size(); ++n) {
      point p(space.dimensions.size());
      std::size_t rest = n;
      for (std::size_t i = p.size(); i-- > 0;) {
        const std::size_t k = space.dimensions[i].choices.size();
        p[i] = static_cast<std::uint32_t>(rest % k);
        rest /= k;
      }
      points.push_back(std::move(p));
    }
    return points;
  }
};

// Optuna's TPESampler defaults, categorical and independent: the first `startup_trials` points
// are random; then the finished trials split into the best gamma(n) = min(ceil(0.1 n), 25) and
// the rest, each side's choices of a dimension make a Parzen mixture (one kernel per trial,
// weighted by Optuna's default_weights, plus a uniform prior), and of `candidates` draws from the
// good side's mixture the one with the largest l(x) / g(x) is kept. With several objectives the
// trials are ordered by non-dominated rank, then by crowding distance (NSGA-II's order), where
// Optuna's MOTPE uses hypervolume contributions.
class tpe_sampler final : public sampler {
public:
  struct options {
    std::size_t startup_trials = 10;
    std::size_t candidates = 24;
    double prior_weight = 1.0;
    std::size_t redraws = 8;  // attempts at a point not tried yet
  };
  tpe_sampler() = default;
  explicit tpe_sampler(options o) : options_(o) {}
  std::string_view name() const override { return "tpe"; }

  std::vector<point> ask(const search_space& space, std::span<const observation> history, std::size_t,
                         std::size_t count, random_stream& random) override {
    std::vector<point> points;
    if (history.size() < options_.startup_trials) {
      for (std::size_t k = 0; k < count; ++k) points.push_back(random_sampler::draw(space, random));
      return points;
    }
    const auto [good, bad] = split(history);
    std::vector<std::vector<double>> l, g;  // per dimension
    for (std::size_t d = 0; d < space.dimensions.size(); ++d) {
      const std::size_t choices = space.dimensions[d].choices.size();
      l.push_back(mixture(history, good, d, choices));
      g.push_back(mixture(history, bad, d, choices));
    }
    // The trials of a batch share one model, whose argmax would often give them one point:
    // a point already tried (or asked for in this batch) is drawn again, from fresh candidates,
    // and after `redraws` attempts replaced by a random point.
    std::set<point> seen;
    for (const observation& o : history) seen.insert(o.choices);
    for (std::size_t k = 0; k < count; ++k) {
      point p(space.dimensions.size());
      for (std::size_t attempt = 0; attempt <= options_.redraws; ++attempt) {
        if (attempt == options_.redraws) {
          p = random_sampler::draw(space, random);
          break;
        }
        for (std::size_t d = 0; d < p.size(); ++d) {
          double best_score = -std::numeric_limits<double>::infinity();
          std::uint32_t best = 0;
          for (std::size_t c = 0; c < options_.candidates; ++c) {
            const std::uint32_t x = draw_from(l[d], random);
            const double score = std::log(l[d][x]) - std::log(g[d][x]);
            if (score > best_score) best_score = score, best = x;
          }
          p[d] = best;
        }
        if (!seen.contains(p)) break;
      }
      seen.insert(p);
      points.push_back(std::move(p));
    }
    return points;
  }

  // Optuna's default_weights: equal for up to 25 trials; beyond, the newest 25 weigh 1 and the
  // older ones ramp linearly from 1/n up to 1 (oldest lightest). `members` in trial order.
  static std::vector<double> default_weights(std::size_t n) {
    std::vector<double> w(n, 1.0);
    if (n < 25) return w;
    const std::size_t ramp = n - 25;
    for (std::size_t i = 0; i < ramp; ++i)
      w[i] = ramp == 1 ? 1.0 / static_cast<double>(n)
                       : 1.0 / static_cast<double>(n) +
                             (1.0 - 1.0 / static_cast<double>(n)) * static_cast<double>(i) / static_cast<double>(ramp - 1);
    return w;
  }

  static std::size_t gamma(std::size_t n) {
    return std::min<std::size_t>(static_cast<std::size_t>(std::ceil(0.1 * static_cast<double>(n))), 25);
  }

private:
  // The good and the bad trials (indices into history), each in trial order.
  static std::pair<std::vector<std::size_t>, std::vector<std::size_t>> split(std::span<const observation> history) {
    std::vector<objective_vector> values;
    for (const observation& o : history) values.push_back(o.values);
    std::vector<std::size_t> order(history.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    if (!values.empty() && values[0].size() == 1) {
      std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return values[a][0] < values[b][0]; });
    } else {
      const std::vector<std::size_t> rank = nondominated_ranks(values);
      std::vector<double> crowding(history.size(), 0.0);
      for (std::size_t level = 0;; ++level) {
        std::vector<std::size_t> members;
        for (std::size_t i = 0; i < rank.size(); ++i)
          if (rank[i] == level) members.push_back(i);
        if (members.empty()) break;
        const std::vector<double> d = crowding_distances(values, members);
        for (std::size_t i = 0; i < members.size(); ++i) crowding[members[i]] = d[i];
      }
      std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return rank[a] != rank[b] ? rank[a] < rank[b] : crowding[a] > crowding[b];
      });
    }
    const std::size_t n_good = gamma(history.size());
    std::vector<std::size_t> good(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(n_good));
    std::vector<std::size_t> bad(order.begin() + static_cast<std::ptrdiff_t>(n_good), order.end());
    const auto by_number = [&](std::size_t a, std::size_t b) { return history[a].number < history[b].number; };
    std::sort(good.begin(), good.end(), by_number);
    std::sort(bad.begin(), bad.end(), by_number);
    return {good, bad};
  }

  std::vector<double> mixture(std::span<const observation> history, const std::vector<std::size_t>& members,
                              std::size_t d, std::size_t choices) const {
    std::vector<std::uint32_t> observed;
    for (std::size_t i : members) observed.push_back(history[i].choices[d]);
    return parzen_probabilities(observed, choices, options_.prior_weight);
  }

public:
  // The Parzen mixture's probability of each of `choices` values, from the values `observed`
  // (in trial order), as Optuna's categorical estimator: kernel i puts prior_weight / kernels on
  // every value and 1 more on its observation (then normalized), the prior kernel is uniform, and
  // the kernels weigh default_weights, the prior prior_weight.
  static std::vector<double> parzen_probabilities(std::span<const std::uint32_t> observed, std::size_t choices,
                                                  double prior_weight) {
    std::vector<double> p(choices, 0.0);
    const std::size_t kernels = observed.size() + 1;
    const std::vector<double> w = default_weights(observed.size());
    const double total_weight = std::accumulate(w.begin(), w.end(), 0.0) + prior_weight;
    const double floor = prior_weight / static_cast<double>(kernels);
    const double kernel_sum = floor * static_cast<double>(choices) + 1.0;
    for (std::size_t i = 0; i < observed.size(); ++i)
      for (std::size_t c = 0; c < choices; ++c) p[c] += w[i] * (floor + (c == observed[i] ? 1.0 : 0.0)) / kernel_sum;
    for (std::size_t c = 0; c < choices; ++c) p[c] += prior_weight / static_cast<double>(choices);
    for (double& v : p) v /= total_weight;
    return p;
  }

private:
  static std::uint32_t draw_from(const std::vector<double>& p, random_stream& random) {
    double u = random.uniform();
    for (std::size_t c = 0; c + 1 < p.size(); ++c) {
      if (u < p[c]) return static_cast<std::uint32_t>(c);
      u -= p[c];
    }
    return static_cast<std::uint32_t>(p.size() - 1);
  }

  options options_{};
};

// The sampler a config's name means: MASE's (Optuna's) spellings nsgaii, nsgaiii and brute-force
// are mase's nsga2, nsga3 and grid; the other names are their own. mase::error naming `where`
// for a name no sampler has.
inline std::string_view canonical_sampler_name(std::string_view name, std::string_view where = "sampler") {
  if (name == "nsgaii") return "nsga2";
  if (name == "nsgaiii") return "nsga3";
  if (name == "brute-force" || name == "bruteforce") return "grid";
  for (std::string_view known : {"random", "grid", "tpe", "qmc", "nsga2", "nsga3", "ilp"})
    if (name == known) return known;
  throw error(fmt::format("{}: unknown sampler \"{}\"; the samplers are random, grid (or brute-force), tpe, qmc, nsga2 "
                          "(or nsgaii), nsga3 (or nsgaiii) and ilp",
                          where, name));
}

// Every sampler name a config may give (canonical_sampler_name); mase::error naming `where` for
// another name.
inline void check_sampler_name(std::string_view name, std::string_view where) { (void)canonical_sampler_name(name, where); }

// A sampler by the name a config gives it, with its defaults (nsga3's population: 20). nsga2 and
// ilp live in nsga2.hpp (pagmo) and ilp.hpp (GLPK): programs that link those make them there
// (make_nsga2_sampler, make_ilp_sampler).
inline std::unique_ptr<sampler> make_sampler(std::string_view name, std::string_view where = "sampler") {
  const std::string_view kind = canonical_sampler_name(name, where);
  if (kind == "random") return std::make_unique<random_sampler>();
  if (kind == "tpe") return std::make_unique<tpe_sampler>();
  if (kind == "qmc") return std::make_unique<qmc_sampler>();
  if (kind == "nsga3") return std::make_unique<nsga3_sampler>();
  if (kind == "nsga2")
    throw error(fmt::format("{}: {} (NSGA-II) runs on pagmo; this program was built without it (install libpagmo-dev, "
                            "include <mase/search/nsga2.hpp> and link Pagmo::pagmo)",
                            where, name));
  if (kind == "ilp")
    throw error(fmt::format("{}: ilp solves with GLPK; this program was built without it (install libglpk-dev, include "
                            "<mase/search/ilp.hpp> and link -lglpk)",
                            where));
  return std::make_unique<grid_sampler>();
}

}  // namespace mase::search
