#pragma once
// The strategy contract: what a sampler is given (the finished trials, a generator per batch,
// trial_batches to drive) and what it answers (points). The samplers themselves are in
// sampler.hpp, qmc.hpp, nsga3.hpp and, for their libraries, nsga2.hpp and ilp.hpp.
//
// Trials are asked for in batches of a fixed size; a batch sees the trials of earlier batches
// only and draws from a generator seeded by the search's seed and the batch's number, so a
// search repeats exactly whatever the number of threads or processes, and resumes exactly.

#include <mase/core/error.hpp>
#include <mase/search/pareto.hpp>
#include <mase/search/space.hpp>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/core.h>

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

}  // namespace mase::search
