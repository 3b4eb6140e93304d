#pragma once
// Samplers: where the next trials go, from the trials that finished. Random, grid (MASE's
// "brute-force") and TPE, the Tree-structured Parzen Estimator (Bergstra et al. 2011) as Optuna
// runs it by default: independent per dimension, every dimension categorical.
//
// Trials are asked for in batches of a fixed size; a batch sees the trials of earlier batches
// only and draws from a generator seeded by the search's seed and the batch's number, so a
// search repeats exactly whatever the number of threads or processes, and resumes exactly.

#include <mase/search/pareto.hpp>
#include <mase/search/space.hpp>

#include <algorithm>
#include <chrono>
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

// A 64-bit generator whose streams are the same on every platform (std's distributions are
// not), with the two draws the samplers need.
class random_stream {
public:
  explicit random_stream(std::uint64_t seed) : state_(seed) {}
  // splitmix64 (Steele, Lea, Flood 2014): every seed, 0 included, gives a full-period stream.
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // Uniform in [0, n), n > 0, without modulo bias (rejection).
  std::uint64_t below(std::uint64_t n) {
    const std::uint64_t limit = std::numeric_limits<std::uint64_t>::max() - std::numeric_limits<std::uint64_t>::max() % n;
    std::uint64_t x = next();
    while (x >= limit) x = next();
    return x % n;
  }
  // Uniform in [0, 1).
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

private:
  std::uint64_t state_;
};

// The generator of batch `batch` of a search seeded `seed`.
inline random_stream batch_stream(std::uint64_t seed, std::uint64_t batch) {
  random_stream mix(seed ^ 0x6d617365ULL);  // "mase"
  const std::uint64_t a = mix.next();
  return random_stream(a ^ random_stream(batch).next());
}

// A finished trial as a sampler sees it: its point and its objective values, each minimized.
struct observation {
  std::size_t number = 0;
  point choices;
  objective_vector values;
};

// A measurement that is not a trial: point `choices` with only `subjects` quantized.
struct subject_request {
  point choices;
  std::vector<std::size_t> subjects;  // empty: nothing quantized (the float32 model)
};

// What a strategy drives: batches of points evaluated as trials, numbered in the order they are
// given (run_search implements it: threads, the journal, resuming). A strategy that gives the
// same batches for the same history resumes exactly.
class trial_batches {
public:
  virtual ~trial_batches() = default;
  virtual std::size_t batch_size() const = 0;
  // Trials that may still run: 0 once the budget is spent or the time is up.
  virtual std::size_t budget_left() const = 0;
  virtual std::uint64_t seed() const = 0;
  // The successful trials so far, in trial order.
  virtual std::span<const observation> history() const = 0;
  // Evaluates `points` as the next trials; their values, each minimized (empty if it failed).
  virtual std::vector<objective_vector> evaluate(const std::vector<point>& points) = 0;
  virtual std::size_t objective_count() const = 0;
  // The objective values (minimized) of each request, on the search's threads; nothing is
  // journaled and no trial is counted (a sensitivity study's measurements). Throws if one fails.
  virtual std::vector<objective_vector> measure(const std::vector<subject_request>& requests) = 0;
  // Time spent choosing `points` points, for the study's sampler figure.
  virtual void add_sampling_time(double seconds, std::size_t points) = 0;
};

class sampler {
public:
  virtual ~sampler() = default;
  virtual std::string_view name() const = 0;
  // The points of trials first, first + 1, …, at most `count` of them (fewer when the sampler
  // has nothing more to try, as grid at the end of its space); `first` counts this sampler's
  // trials only (not the enqueued ones).
  // A strategy that drives its own loop (below) is never asked.
  virtual std::vector<point> ask(const search_space&, std::span<const observation>, std::size_t, std::size_t,
                                 random_stream&) {
    throw error(fmt::format("the {} sampler chooses its points itself (drive); it is not asked for them", name()));
  }

  // The search loop: batches of ask(), each from a stream seeded by the search's seed and the
  // batch's number, until the budget is spent or the sampler has no more points. Strategies that
  // run their own loop (NSGA-II) override it.
  virtual void drive(const search_space& space, trial_batches& trials) {
    std::size_t asked = 0;
    for (std::uint64_t batch = 0; trials.budget_left() > 0; ++batch) {
      const std::size_t count = std::min(trials.batch_size(), trials.budget_left());
      random_stream random = batch_stream(trials.seed(), batch);
      const auto begin = std::chrono::steady_clock::now();
      const std::vector<point> points = ask(space, trials.history(), asked, count, random);
      trials.add_sampling_time(std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count(),
                               points.size());
      if (points.empty()) break;
      asked += points.size();
      trials.evaluate(points);
      if (points.size() < count) break;  // nothing more to try (grid at the end of its space)
    }
  }
};

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

// Every sampler name a config may give: random, grid (MASE's brute-force), tpe, nsga2 (which
// needs pagmo, nsga2.hpp) and ilp (which needs GLPK, ilp.hpp); mase::error naming `where` for
// another name.
inline void check_sampler_name(std::string_view name, std::string_view where) {
  for (std::string_view known : {"random", "grid", "brute-force", "bruteforce", "tpe", "nsga2", "ilp"})
    if (name == known) return;
  throw error(fmt::format("{}: unknown sampler \"{}\"; the samplers are random, grid (or brute-force), tpe, nsga2 and ilp",
                          where, name));
}

// A sampler by the name a config gives it. nsga2 and ilp live in nsga2.hpp (pagmo) and ilp.hpp
// (GLPK): programs that link those make them there (make_nsga2_sampler, make_ilp_sampler).
inline std::unique_ptr<sampler> make_sampler(std::string_view name, std::string_view where = "sampler") {
  check_sampler_name(name, where);
  if (name == "random") return std::make_unique<random_sampler>();
  if (name == "tpe") return std::make_unique<tpe_sampler>();
  if (name == "nsga2")
    throw error(fmt::format("{}: nsga2 runs on pagmo; this program was built without it (install libpagmo-dev, "
                            "include <mase/search/nsga2.hpp> and link Pagmo::pagmo)",
                            where));
  if (name == "ilp")
    throw error(fmt::format("{}: ilp solves with GLPK; this program was built without it (install libglpk-dev, include "
                            "<mase/search/ilp.hpp> and link -lglpk)",
                            where));
  return std::make_unique<grid_sampler>();
}

}  // namespace mase::search
