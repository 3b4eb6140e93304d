// Search spaces over a small MLP and the samplers: which nodes a seed covers, the config at a
// point, fraction widths from measured ranges (checked against the inequalities that define
// them and ranges computed here from the tensors), grid order, and TPE's Parzen estimator
// against Optuna's formula written out.
#include <mase/ir/builder.hpp>
#include <mase/search/sampler.hpp>
#include <mase/search/space.hpp>

#include "search_fixtures.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <vector>

using namespace mase;
using namespace mase::search;
using namespace mase_search_test;

namespace {

seed_config integer_seed(std::string key, choice_list widths) {
  return {std::move(key),
          {{"name", {std::string("integer")}}, {"data_in_width", ints({8})}, {"weight_width", std::move(widths)}}};
}

}  // namespace

TEST_CASE("a space by name covers every quantizable node, by type every op type") {
  const graph g = small_mlp(16);
  const search_space by_name = build_search_space(
      g, {.by = quantize_by::name, .seed = {integer_seed("default", ints({4, 8})), integer_seed("fc2", ints({2, 4, 8}))}});
  CHECK(by_name.subjects == std::vector<std::string>{"fc1", "relu", "fc2"});
  // relu has no weight: it does not choose a weight width.
  REQUIRE(by_name.dimensions.size() == 8);
  CHECK(by_name.dimension_name(4) == "relu.data_in_width");
  CHECK(by_name.dimension_name(7) == "fc2.weight_width");
  CHECK(by_name.dimensions[7].choices.size() == 3);
  CHECK(by_name.size() == 2.0 * 3);

  const search_space by_type =
      build_search_space(g, {.by = quantize_by::type, .seed = {integer_seed("linear", ints({4, 8}))}});
  CHECK(by_type.subjects == std::vector<std::string>{"linear"});  // relu: no entry and no default
  const range_table ranges = measure_ranges(g, {{"x", tensor({16, 8}, std::vector<float>(128, 0.5f))}});
  const quantize_config c = by_type.config_at(g, point{0, 0, 1}, &ranges);
  REQUIRE(c.entries.size() == 2);  // one by-name entry per linear node
  CHECK(c.by == quantize_by::name);
  CHECK(c.entries[0].first == "fc1");
  CHECK(std::get<std::int64_t>(std::get<quant_config>(c.entries[1].second).at("weight_width")) == 8);

  const search_space by_pattern = build_search_space(
      g, {.by = quantize_by::regex_name, .seed = {integer_seed("fc.", ints({4})), integer_seed("default", ints({2}))}});
  CHECK(by_pattern.subjects == std::vector<std::string>{"fc.", "default"});
  CHECK(by_pattern.subject_of(g.at("fc2")) == 0u);
  CHECK(by_pattern.subject_of(g.at("relu")) == 1u);
}

TEST_CASE("a bad seed is an error naming its entry") {
  const graph g = small_mlp(16);
  const config_source source{.file = "s.toml", .table = "search.search_space"};
  CHECK_THROWS_WITH(build_search_space(g, {.by = quantize_by::name, .seed = {integer_seed("fc9", ints({4}))}, .source = source}),
                    Catch::Contains("[search.search_space.seed.fc9.config]") && Catch::Contains("no quantizable node named fc9"));
  CHECK_THROWS_WITH(build_search_space(g, {.by = quantize_by::type, .seed = {integer_seed("conv2d", ints({4}))}}),
                    Catch::Contains("no quantizable node of type conv2d"));
  CHECK_THROWS_WITH(build_search_space(g, {.by = quantize_by::name, .seed = {integer_seed("fc1", {})}}),
                    Catch::Contains("weight_width is an empty list"));
  CHECK_THROWS_WITH(build_search_space(g, {.by = quantize_by::regex_name, .seed = {integer_seed("conv.*", ints({4}))}}),
                    Catch::Contains("matches no quantizable node"));
}

TEST_CASE("fraction_bits_for: the integer part just holds the magnitude") {
  for (int width = 2; width <= 16; ++width)
    for (double m : {0.001, 0.3, 0.5, 0.75, 1.0, 1.5, 2.0, 3.99, 7.0, 100.0, 1e6}) {
      const int frac = fraction_bits_for(width, m);
      INFO("width " << width << ", magnitude " << m << ", frac " << frac);
      CHECK(std::ldexp(1.0, width - 1 - frac) >= m);     // the range reaches m (to one step)
      CHECK(std::ldexp(1.0, width - 2 - frac) < m);      // one more fraction bit would not
    }
  CHECK(fraction_bits_for(8, 0.0) == 7);
}

TEST_CASE("NA fraction widths come from the ranges measured on the data") {
  const graph g = small_mlp(16);
  tensor x({16, 8});
  for (std::size_t i = 0; i < x.size(); ++i) x.data()[i] = static_cast<float>(std::sin(0.37 * static_cast<double>(i))) * 3.0f;
  const range_table ranges = measure_ranges(g, {{"x", x}});
  const auto max_abs = [](const tensor& t) {
    double m = 0;
    for (float v : t.values()) m = std::max(m, static_cast<double>(std::fabs(v)));
    return m;
  };
  REQUIRE(ranges.at("fc1").data_in);
  CHECK(*ranges.at("fc1").data_in == max_abs(x));
  CHECK(*ranges.at("fc1").weight == max_abs(g.at("fc1").parameters.at("weight")));
  CHECK(*ranges.at("fc2").bias == max_abs(g.at("fc2").parameters.at("bias")));

  const search_space space = build_search_space(
      g, {.by = quantize_by::name,
          .seed = {{"fc1",
                    {{"name", {std::string("integer")}},
                     {"data_in_width", ints({6})},
                     {"data_in_frac_width", {std::string("NA")}},
                     {"weight_width", ints({4})}}}}});
  const quantize_config c = space.config_at(g, point{0, 0, 0, 0}, &ranges);
  const quant_config& fc1 = std::get<quant_config>(c.entries.at(0).second);
  CHECK(std::get<std::int64_t>(fc1.at("data_in_frac_width")) == fraction_bits_for(6, max_abs(x)));
  CHECK(std::get<std::int64_t>(fc1.at("weight_frac_width")) ==
        fraction_bits_for(4, max_abs(g.at("fc1").parameters.at("weight"))));
  CHECK_THROWS_WITH(space.config_at(g, point{0, 0, 0, 0}), Catch::Contains("no range of its data_in was measured"));
}

TEST_CASE("grid enumerates every point once, the last dimension fastest, then stops") {
  search_space space;
  space.subjects = {"a"};
  space.dimensions = {{0, "p", ints({1, 2, 3})}, {0, "q", ints({1, 2})}, {0, "r", ints({1, 2, 3, 4})}};
  grid_sampler grid;
  random_stream unused(0);
  std::vector<point> all = grid.ask(space, {}, 0, 10, unused);
  const std::vector<point> rest = grid.ask(space, {}, 10, 100, unused);
  all.insert(all.end(), rest.begin(), rest.end());
  REQUIRE(all.size() == 24);
  CHECK(all[1] == point{0, 0, 1});
  CHECK(all[4] == point{0, 1, 0});
  CHECK(std::set<point>(all.begin(), all.end()).size() == 24);
}

TEST_CASE("random: a batch's stream repeats, and every choice is drawn") {
  search_space space;
  space.subjects = {"a"};
  space.dimensions = {{0, "p", ints({1, 2, 3, 4, 5})}, {0, "q", ints({1, 2, 3})}};
  random_sampler sampler;
  random_stream s1 = batch_stream(42, 3), s2 = batch_stream(42, 3), other = batch_stream(42, 4);
  const std::vector<point> a = sampler.ask(space, {}, 0, 500, s1), b = sampler.ask(space, {}, 0, 500, s2);
  CHECK(a == b);
  CHECK(sampler.ask(space, {}, 0, 500, other) != a);
  std::set<std::uint32_t> seen;
  for (const point& p : a) seen.insert(p[0]);
  CHECK(seen.size() == 5);
}

TEST_CASE("TPE's Parzen estimator is Optuna's categorical kernel mixture") {
  // Observations 0, 0, 1 of 3 values, prior weight 1: 4 kernels, each putting 1/4 on every
  // value and 1 more on its observation (sum 7/4); weights 1, 1, 1 and the prior 1.
  const std::vector<std::uint32_t> observed{0, 0, 1};
  const std::vector<double> p = tpe_sampler::parzen_probabilities(observed, 3, 1.0);
  const double k = 1.75;
  CHECK(p[0] == Approx((2 * 1.25 / k + 0.25 / k + 1.0 / 3) / 4));
  CHECK(p[1] == Approx((2 * 0.25 / k + 1.25 / k + 1.0 / 3) / 4));
  CHECK(p[2] == Approx((3 * 0.25 / k + 1.0 / 3) / 4));
  CHECK(p[0] + p[1] + p[2] == Approx(1.0));

  // Optuna's default_weights: flat up to 25; beyond, a ramp from 1/n for the oldest.
  CHECK(tpe_sampler::default_weights(10) == std::vector<double>(10, 1.0));
  const std::vector<double> w = tpe_sampler::default_weights(30);
  CHECK(w[0] == Approx(1.0 / 30));
  CHECK(w[4] == Approx(1.0));
  CHECK(w[29] == 1.0);
  CHECK(tpe_sampler::gamma(10) == 1);
  CHECK(tpe_sampler::gamma(101) == 11);
  CHECK(tpe_sampler::gamma(1000) == 25);
}

TEST_CASE("TPE finds a separable optimum sooner than random search") {
  // Minimize the distance of 6 indices (8 values each) from a target: random search's best of
  // 60 draws is far from it; TPE concentrates on the good values of each dimension.
  search_space space;
  space.subjects = {"a"};
  for (int d = 0; d < 6; ++d) space.dimensions.push_back({0, "k" + std::to_string(d), ints({0, 1, 2, 3, 4, 5, 6, 7})});
  const point target{5, 2, 7, 0, 3, 6};
  const auto loss = [&](const point& p) {
    double sum = 0;
    for (std::size_t d = 0; d < p.size(); ++d) sum += std::fabs(static_cast<double>(p[d]) - target[d]);
    return sum;
  };
  const auto best_after = [&](sampler& s, std::uint64_t seed) {
    std::vector<point> points;
    std::vector<observation> history;
    double best = 1e9;
    for (std::size_t batch = 0; batch < 15; ++batch) {
      random_stream r = batch_stream(seed, batch);
      for (const point& p : s.ask(space, history, batch * 4, 4, r)) points.push_back(p);
      history.clear();
      for (std::size_t i = 0; i < points.size(); ++i) history.push_back({i, points[i], {loss(points[i])}});
      for (const point& p : points) best = std::min(best, loss(p));
    }
    return best;
  };
  double tpe_total = 0, random_total = 0;
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    tpe_sampler tpe;
    random_sampler random;
    tpe_total += best_after(tpe, seed);
    random_total += best_after(random, seed);
  }
  INFO("mean best distance over 5 seeds: TPE " << tpe_total / 5 << ", random " << random_total / 5);
  CHECK(tpe_total < random_total);
}

TEST_CASE("uniform points: every subject takes the same value of each key") {
  const graph g = small_mlp(16);
  const search_space space = build_search_space(
      g, {.by = quantize_by::name,
          .seed = {{"default", {{"name", {std::string("integer")}}, {"data_in_width", ints({4, 8})}, {"weight_width", ints({2, 4, 8})}}},
                   {"fc2", {{"name", {std::string("integer")}}, {"data_in_width", ints({8, 4, 6})}, {"weight_width", ints({8, 3})}}}}});
  const std::vector<point> points = uniform_points(space);
  // data_in_width: 4 and 8 are in every list (fc2 holds them at other indices); weight_width: only 8.
  REQUIRE(points.size() == 2);
  for (const point& p : points) {
    std::set<std::int64_t> data, weight;
    for (std::size_t i = 0; i < p.size(); ++i) {
      const dimension& d = space.dimensions[i];
      if (d.key == "data_in_width") data.insert(std::get<std::int64_t>(d.choices[p[i]]));
      if (d.key == "weight_width") weight.insert(std::get<std::int64_t>(d.choices[p[i]]));
    }
    CHECK(data.size() == 1);
    CHECK(weight == std::set<std::int64_t>{8});
  }
  CHECK(points[0] != points[1]);
}
