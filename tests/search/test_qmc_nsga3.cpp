// MASE's qmc and nsgaiii samplers: Sobol's sequence against its definition (Joe and Kuo's
// direction numbers, the Bratley-Fox recurrence, Gray-code order) and the even cover of every
// choice it promises; NSGA-III's reference points, its selection on fronts computed by hand, its
// hypervolume against random search on a discretized ZDT1, and a MASE-style TOML end to end.
#include <mase/search/config.hpp>
#include <mase/search/nsga3.hpp>
#include <mase/search/qmc.hpp>
#include <mase/search/sampler.hpp>
#include <mase/search/study.hpp>

#include "search_fixtures.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <span>
#include <string>
#include <vector>

using namespace mase;
using namespace mase::search;
using namespace mase_search_test;

namespace {

// A space of dimensions with `sizes` choices each (the values do not matter to a sampler).
search_space space_of(const std::vector<std::size_t>& sizes) {
  search_space s;
  s.subjects = {"default"};
  for (std::size_t k : sizes) {
    dimension d{.subject = 0, .key = "weight_width", .choices = {}};
    for (std::size_t c = 0; c < k; ++c) d.choices.emplace_back(static_cast<std::int64_t>(c + 1));
    s.dimensions.push_back(std::move(d));
  }
  return s;
}

// Sobol's sequence from its definition, in 32 bits: dimension 1 takes every direction number
// m_k = 1; the next ones Joe and Kuo's table (new-joe-kuo-6.21201: degree s, coefficients a, the
// first m_k), extended by m_k = 2 a_1 m_{k-1} ^ … ^ 2^(s-1) a_(s-1) m_(k-s+1) ^ 2^s m_(k-s) ^ m_(k-s);
// point n XORs v_k = m_k 2^(32-k) over the bits k of n's Gray code n ^ (n >> 1).
struct joe_kuo_row {
  unsigned s, a;
  std::vector<std::uint32_t> m;
};
std::uint32_t sobol_by_definition(std::size_t dimension, std::uint32_t n) {
  static const std::vector<joe_kuo_row> table = {{1, 0, {1}}, {2, 1, {1, 3}}, {3, 1, {1, 3, 1}}, {3, 2, {1, 1, 1}}};
  std::vector<std::uint32_t> m;
  if (dimension == 0) {
    m.assign(32, 1);
  } else {
    const joe_kuo_row& row = table.at(dimension - 1);
    m = row.m;
    for (std::size_t k = row.s; k < 32; ++k) {
      std::uint32_t next = m[k - row.s] ^ (m[k - row.s] << row.s);
      for (unsigned i = 1; i < row.s; ++i)
        if ((row.a >> (row.s - 1 - i)) & 1u) next ^= m[k - i] << i;
      m.push_back(next);
    }
  }
  const std::uint32_t gray = n ^ (n >> 1);
  std::uint32_t x = 0;
  for (unsigned k = 0; k < 32; ++k)
    if ((gray >> k) & 1u) x ^= m[k] << (31 - k);
  return x;
}

// Trials scored by a function of the point alone: a strategy run without a model.
class function_batches final : public trial_batches {
public:
  function_batches(std::size_t budget, std::size_t batch, std::uint64_t seed, std::size_t objectives,
                   std::function<objective_vector(const point&)> f)
      : budget_(budget), batch_(batch), seed_(seed), objectives_(objectives), f_(std::move(f)) {}
  std::size_t batch_size() const override { return batch_; }
  std::size_t budget_left() const override { return budget_ - std::min(budget_, asked_.size()); }
  std::uint64_t seed() const override { return seed_; }
  std::span<const observation> history() const override { return history_; }
  std::size_t objective_count() const override { return objectives_; }
  std::vector<objective_vector> measure(const std::vector<subject_request>&) override { return {}; }
  void add_sampling_time(double, std::size_t) override {}
  std::vector<objective_vector> evaluate(const std::vector<point>& points) override {
    std::vector<objective_vector> values;
    for (const point& p : points) {
      values.push_back(f_(p));
      history_.push_back({asked_.size(), p, values.back()});
      asked_.push_back(p);
    }
    return values;
  }
  const std::vector<point>& asked() const { return asked_; }

private:
  std::size_t budget_, batch_;
  std::uint64_t seed_;
  std::size_t objectives_;
  std::function<objective_vector(const point&)> f_;
  std::vector<observation> history_;
  std::vector<point> asked_;
};

// ZDT1 (Zitzler, Deb, Thiele 2000) on 8 dimensions of 8 values, x_i = index / 7: f1 = x_0,
// g = 1 + 9 mean(x_1 … x_7), f2 = g (1 - sqrt(f1 / g)); its front is g = 1, every x_i = 0 but x_0.
objective_vector zdt1(const point& p) {
  const double f1 = p[0] / 7.0;
  double sum = 0;
  for (std::size_t i = 1; i < p.size(); ++i) sum += p[i] / 7.0;
  const double g = 1 + 9 * sum / static_cast<double>(p.size() - 1);
  return {f1, g * (1 - std::sqrt(f1 / g))};
}

double front_hypervolume(std::span<const observation> trials, const objective_vector& reference) {
  std::vector<objective_vector> values;
  for (const observation& o : trials) values.push_back(o.values);
  std::vector<objective_vector> front;
  for (std::size_t i : pareto_front(values)) front.push_back(values[i]);
  return hypervolume(front, reference);
}

}  // namespace

TEST_CASE("qmc: the points are Sobol's, as its definition gives them, from the origin") {
  // The first points, as exact fractions: dimension 1 is van der Corput's sequence in Gray-code
  // order, dimension 2 Joe and Kuo's first polynomial x + 1.
  const double first[4][2] = {{0, 0}, {0.5, 0.5}, {0.75, 0.25}, {0.25, 0.75}};
  for (std::uint32_t n = 0; n < 4; ++n) {
    const std::vector<std::uint64_t> words = qmc_sampler::sobol_point(2, n);
    for (std::size_t d = 0; d < 2; ++d) CHECK(static_cast<double>(words[d]) * 0x1p-64 == first[n][d]);
  }
  for (std::uint32_t n = 0; n < 4096; ++n) {
    const std::vector<std::uint64_t> words = qmc_sampler::sobol_point(5, n);
    for (std::size_t d = 0; d < 5; ++d) {
      CHECK(words[d] >> 32 == sobol_by_definition(d, n));
      CHECK((words[d] & 0xffffffffULL) == 0);  // 32 bits hold the first 2^32 points
    }
  }
}

TEST_CASE("qmc: the sampler's trial n is point n, each coordinate one choice, every choice evenly") {
  const search_space space = space_of({2, 3, 1, 4, 5, 7, 6});
  qmc_sampler sampler;
  random_stream unused(0);
  const std::vector<point> all = sampler.ask(space, {}, 0, 1024, unused);
  REQUIRE(all.size() == 1024);
  // Single-valued dimensions take no coordinate: dimension 3 (4 choices) reads coordinate 2.
  const std::vector<std::size_t> coordinate = {0, 1, 0, 2, 3, 4, 5};
  for (std::uint32_t n = 0; n < 1024; ++n) {
    const std::vector<std::uint64_t> words = qmc_sampler::sobol_point(6, n);
    for (std::size_t d = 0; d < space.dimensions.size(); ++d) {
      const std::size_t k = space.dimensions[d].choices.size();
      const std::uint32_t expected =
          k == 1 ? 0 : static_cast<std::uint32_t>(std::floor(static_cast<double>(words[coordinate[d]]) * 0x1p-64 * static_cast<double>(k)));
      CHECK(all[n][d] == expected);
    }
  }
  // 2^10 points put each coordinate on every multiple of 2^-10 once, so value c of k is chosen
  // for the multiples j / 1024 in [c / k, (c + 1) / k): ceil((c + 1) 1024 / k) - ceil(c 1024 / k).
  for (std::size_t d = 0; d < space.dimensions.size(); ++d) {
    const std::size_t k = space.dimensions[d].choices.size();
    std::vector<std::size_t> count(k, 0);
    for (const point& p : all) ++count[p[d]];
    for (std::size_t c = 0; c < k; ++c) CHECK(count[c] == (1024 * (c + 1) + k - 1) / k - (1024 * c + k - 1) / k);
  }
  // Asked for in batches, from any trial: the same points.
  for (std::size_t first : {std::size_t{1}, std::size_t{7}, std::size_t{300}}) {
    const std::vector<point> part = sampler.ask(space, {}, first, 9, unused);
    for (std::size_t i = 0; i < part.size(); ++i) CHECK(part[i] == all[first + i]);
  }
}

TEST_CASE("qmc scrambled: another sequence per seed, repeatable, covering every choice as evenly") {
  const search_space space = space_of({3, 5, 4});
  const auto run = [&](std::uint64_t seed) {
    function_batches trials(512, 8, seed, 1, [](const point&) { return objective_vector{0.0}; });
    qmc_sampler sampler({.scramble = true});
    sampler.drive(space, trials);
    return trials.asked();
  };
  CHECK(qmc_sampler({.scramble = true}).name() == "qmc_scrambled");  // in the journal: never resumed unscrambled
  const std::vector<point> a = run(1), again = run(1), b = run(2);
  REQUIRE(a.size() == 512);
  CHECK(a == again);
  CHECK(a != b);
  // A shift moves the 2^9 multiples of 2^-9 to (j + δ) / 2^9 for one δ in [0, 1), so the count
  // of [c / k, (c + 1) / k) is still ceil(512 (c + 1) / k - δ) - ceil(512 c / k - δ): 512 / k
  // rounded down or up.
  for (const std::vector<point>* points : {&a, &b})
    for (std::size_t d = 0; d < space.dimensions.size(); ++d) {
      const std::size_t k = space.dimensions[d].choices.size();
      std::vector<std::size_t> count(k, 0);
      for (const point& p : *points) ++count[p[d]];
      for (std::size_t c = 0; c < k; ++c) CHECK((count[c] == 512 / k || count[c] == (512 + k - 1) / k));
    }
}

TEST_CASE("nsga3: Das and Dennis's reference points, as many as fit in the population") {
  const std::vector<objective_vector> two = simplex_reference_points(2, 3);
  CHECK(two == std::vector<objective_vector>{{1, 0}, {2.0 / 3, 1.0 / 3}, {1.0 / 3, 2.0 / 3}, {0, 1}});
  const std::vector<objective_vector> three = simplex_reference_points(3, 4);
  CHECK(three.size() == 15);  // C(6, 4)
  std::set<objective_vector> distinct(three.begin(), three.end());
  CHECK(distinct.size() == 15);
  for (const objective_vector& v : three) {
    double sum = 0;
    for (double x : v) {
      CHECK(x * 4 == std::round(x * 4));
      sum += x;
    }
    CHECK(sum == Approx(1.0));
  }
  CHECK(nsga3_divisions(2, 20) == 19);  // 20 points
  CHECK(nsga3_divisions(3, 20) == 4);   // 15; 5 divisions would be 21
  CHECK(nsga3_divisions(4, 20) == 3);   // 20
  CHECK(nsga3_divisions(6, 4) == 1);    // fewer never: one point per objective
}

TEST_CASE("nsga3: the selection keeps whole fronts, then the points nearest the reference lines") {
  // 11 points on the front f1 + f2 = 1, then three dominated ones (ranks 1, 2, 3).
  std::vector<objective_vector> values;
  for (int i = 0; i <= 10; ++i) values.push_back({i / 10.0, 1 - i / 10.0});
  values.push_back({0.6, 0.6});
  values.push_back({0.9, 0.9});
  values.push_back({1.0, 1.0});
  const std::vector<objective_vector> references = simplex_reference_points(2, 2);  // (1, 0), (½, ½), (0, 1)
  for (std::uint64_t seed = 0; seed < 20; ++seed) {
    random_stream random(seed);
    // Two whole fronts: no choice to make.
    CHECK(nsga3_select(values, 12, references, random) == std::vector<std::size_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
    // The ideal point is (0, 0) and the extreme points (1, 0) and (0, 1), so the objectives stay
    // as they are; each reference with no member yet takes the point on its line.
    CHECK(nsga3_select(values, 3, references, random) == std::vector<std::size_t>{0, 5, 10});
    // Two more: each from a reference with one member, never both from one. By perpendicular
    // distance, x <= 0.2 is nearest (0, 1), 0.3 to 0.7 nearest (½, ½), x >= 0.8 nearest (1, 0).
    const std::vector<std::size_t> five = nsga3_select(values, 5, references, random);
    REQUIRE(five.size() == 5);
    const auto niche = [](std::size_t i) { return i <= 2 ? 0 : i <= 7 ? 1 : 2; };
    std::vector<std::size_t> extra;
    for (std::size_t i : five) {
      CHECK(i <= 10);
      if (i != 0 && i != 5 && i != 10) extra.push_back(i);
    }
    REQUIRE(extra.size() == 2);
    CHECK(niche(extra[0]) != niche(extra[1]));
  }
}

TEST_CASE("nsga3 on a discretized ZDT1: a better front than random search for the same trials") {
  const search_space space = space_of({8, 8, 8, 8, 8, 8, 8, 8});
  const objective_vector reference{1.1, 11};
  double nsga3_total = 0, random_total = 0;
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    function_batches evolved(400, 20, seed, 2, zdt1), drawn(400, 20, seed, 2, zdt1);
    nsga3_sampler nsga3({.population = 20});
    nsga3.drive(space, evolved);
    random_sampler random;
    random.drive(space, drawn);
    REQUIRE(evolved.asked().size() == 400);  // 20 generations of 20
    REQUIRE(drawn.asked().size() == 400);
    const double a = front_hypervolume(evolved.history(), reference), b = front_hypervolume(drawn.history(), reference);
    UNSCOPED_INFO("seed " << seed << ": nsga3 " << a << ", random " << b);
    nsga3_total += a;
    random_total += b;
  }
  CHECK(nsga3_total > random_total);
}

TEST_CASE("nsgaiii from a MASE-style TOML: generations of trials, repeatable on any threads, resumable") {
  const std::string toml = R"(
[search.search_space]
name = "graph/quantize/mixed_precision_ptq"
[search.search_space.setup]
by = "name"
[search.search_space.seed.default.config]
name = ["integer"]
data_in_width = [3, 4, 6, 8]
data_in_frac_width = ["NA"]
weight_width = [2, 3, 4, 6, 8]
bias_width = [8]
[search.strategy]
name = "optuna"
[search.strategy.sw_runner.basic_evaluation]
[search.strategy.hw_runner.average_bitwidth]
compare_to = 32
[search.strategy.setup]
n_trials = 42
sampler = "nsgaiii"
population = 8
seed = 4
[search.strategy.metrics]
output_mse.direction = "minimize"
average_bitwidth.direction = "minimize"
)";
  const search_config config = parse_search_config(toml, "nsgaiii.toml");
  CHECK(canonical_sampler_name(config.sampler) == "nsga3");
  const graph g = small_mlp();
  const search_space space = build_search_space(g, config.space);
  const std::filesystem::path dir = std::filesystem::path(MASE_TEST_OUTPUT_DIR) / "search_nsga3";
  std::filesystem::create_directories(dir);
  const std::filesystem::path full = dir / "full.jsonl", cut = dir / "cut.jsonl";
  std::filesystem::remove(full);
  std::filesystem::remove(cut);

  search_options options = options_for(config, space);
  options.journal = full;
  const std::unique_ptr<sampler> a = make_sampler(config);
  CHECK(a->name() == "nsga3");
  const study one = run_search(g, space, *a, objectives_of(config), small_data(), options);
  // 42 trials hold 5 generations of 8.
  REQUIRE(one.trials.size() == 40);
  options.journal.clear();
  options.jobs = 2;
  const std::unique_ptr<sampler> b = make_sampler(parse_search_config(toml, "other.toml"));
  const study two = run_search(g, space, *b, objectives_of(config), small_data(), options);
  REQUIRE(two.trials.size() == 40);
  for (std::size_t i = 0; i < 40; ++i) CHECK(one.trials[i].choices == two.trials[i].choices);

  // The front: no trial dominates a point of it, and the points are distinct.
  std::set<objective_vector> points;
  for (std::size_t i : one.pareto_front()) {
    for (const trial& t : one.trials) CHECK_FALSE(dominates(one.minimized(t), one.minimized(one.trials[i])));
    CHECK(points.insert(one.minimized(one.trials[i])).second);
  }

  // Cut after 13 trials, the journal resumes to the same trials.
  std::ifstream in(full, std::ios::binary);
  std::string line, kept;
  for (int n = 0; n < 1 + 13 && std::getline(in, line); ++n) kept += line + "\n";
  std::ofstream(cut, std::ios::binary) << kept;
  search_options again = options_for(config, space);
  again.journal = cut;
  std::size_t ran = 0;
  again.on_trial = [&](const study&, const trial&) { ++ran; };
  const std::unique_ptr<sampler> c = make_sampler(config);
  const study resumed = run_search(g, space, *c, objectives_of(config), small_data(), again);
  CHECK(ran == 40 - 13);
  REQUIRE(resumed.trials.size() == 40);
  for (std::size_t i = 0; i < 40; ++i) CHECK(resumed.trials[i].choices == one.trials[i].choices);
}

TEST_CASE("MASE's sampler names: nsgaii, nsgaiii and qmc are read, and nsgaii without pagmo says what it needs") {
  CHECK(canonical_sampler_name("nsgaii") == "nsga2");
  CHECK(canonical_sampler_name("nsga2") == "nsga2");
  CHECK(canonical_sampler_name("nsgaiii") == "nsga3");
  CHECK(canonical_sampler_name("nsga3") == "nsga3");
  CHECK(canonical_sampler_name("qmc") == "qmc");
  CHECK(canonical_sampler_name("brute-force") == "grid");
  CHECK(make_sampler("qmc")->name() == "qmc");
  CHECK(make_sampler("nsgaiii")->name() == "nsga3");
  CHECK_THROWS_WITH(make_sampler("nsgaii", "s.toml"), Catch::Contains("s.toml: nsgaii (NSGA-II) runs on pagmo"));
  CHECK_THROWS_WITH(canonical_sampler_name("cmaes", "s.toml"),
                    Catch::Contains("s.toml: unknown sampler \"cmaes\"") && Catch::Contains("qmc"));
}
