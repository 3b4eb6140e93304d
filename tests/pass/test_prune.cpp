// prune: MASE's weight pruning. l1-norm thresholds follow torch.quantile (linear interpolation)
// and mask = |W| > threshold; the expected counts and thresholds are worked out by hand and by a
// plain sort-and-interpolate written here.

#include <mase/ir/builder.hpp>
#include <mase/pass/prune.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <vector>

using namespace mase;

namespace {

// Weights whose magnitudes are k/8 for k = first … first + n − 1 (exact in float), in a scrambled
// order with alternating signs, so the quantile's interpolation is exact.
tensor eighths(const shape& s, int first) {
  const auto n = static_cast<int>(s.numel());
  std::vector<float> v(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    const int k = first + (i * 7) % n;  // 7 is coprime with every n used here: a permutation
    v[static_cast<std::size_t>(i)] = static_cast<float>(k) / 8.0f * (i % 2 == 0 ? 1.0f : -1.0f);
  }
  return tensor(s, std::move(v));
}

// torch.quantile(|w|, q) the plain way: sort, interpolate at q·(n−1).
double plain_quantile(const tensor& w, double q) {
  std::vector<double> m;
  for (float x : w.values()) m.push_back(std::abs(static_cast<double>(x)));
  std::sort(m.begin(), m.end());
  const double pos = q * static_cast<double>(m.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const std::size_t hi = std::min(lo + 1, m.size() - 1);
  return m[lo] + (pos - static_cast<double>(lo)) * (m[hi] - m[lo]);
}

std::int64_t zeros(const tensor& t) {
  return std::count_if(t.values().begin(), t.values().end(), [](float x) { return x == 0.0f; });
}

graph two_linears() {
  builder b;
  auto x = b.input("x", {1, 4});
  auto h = b.add("fc1", op::linear{.in_features = 4, .out_features = 2}, x);
  h = b.add("relu", op::relu{}, h);
  auto y = b.add("fc2", op::linear{.in_features = 2, .out_features = 4}, h);
  graph g = b.output(y);
  g.set_parameter(g.id("fc1"), "weight", eighths({2, 4}, 1));  // magnitudes 1/8 … 8/8
  g.set_parameter(g.id("fc2"), "weight", eighths({4, 2}, 9));  // magnitudes 9/8 … 16/8
  return g;
}

prune_options l1(prune_scope scope, double sparsity) {
  return {.weight = {.scope = scope, .method = prune_method::l1_norm, .sparsity = sparsity}};
}

}  // namespace

TEST_CASE("l1-norm local: torch.quantile threshold, |W| > threshold kept, exact counts") {
  // 20 distinct magnitudes: floor(s·19) + 1 are pruned.
  const struct {
    double sparsity;
    std::int64_t pruned;
  } cases[] = {{0.5, 10}, {0.3, 6}, {0.25, 5}, {0.05, 1}, {0.999, 19}, {1.0, 20}, {0.0, 0}};
  for (const auto& c : cases) {
    CAPTURE(c.sparsity);
    builder b;
    auto x = b.input("x", {3, 4});
    auto y = b.add("fc", op::linear{.in_features = 4, .out_features = 5}, x);
    graph g = b.output(y);
    const tensor original = eighths({5, 4}, 1);
    g.set_parameter(g.id("fc"), "weight", original);
    const tensor bias = g.parameter("fc.bias");

    const prune_info info = prune_weights(g, l1(prune_scope::local, c.sparsity));
    REQUIRE(info.weights.size() == 1);
    const pruned_weight& r = info.at("fc");
    CHECK(r.pruned == c.pruned);
    CHECK(r.numel == 20);
    CHECK(r.sparsity() == Approx(static_cast<double>(c.pruned) / 20.0));
    CHECK(r.target_sparsity == c.sparsity);
    const tensor& w = g.parameter("fc.weight");
    CHECK(zeros(w) == c.pruned);
    if (c.sparsity > 0.0) {
      REQUIRE(r.threshold.has_value());
      // torch rounds the rank and the interpolation to float; the plain version is in double.
      CHECK(static_cast<double>(*r.threshold) == Approx(plain_quantile(original, c.sparsity)).epsilon(1e-6));
      // Pruned exactly where |W| <= threshold; kept weights unchanged; mask matches.
      for (std::size_t i = 0; i < w.size(); ++i) {
        const bool keep = std::abs(original.data()[i]) > *r.threshold;
        CHECK(w.data()[i] == (keep ? original.data()[i] : 0.0f));
        CHECK(r.mask.data()[i] == (keep ? 1.0f : 0.0f));
      }
    } else {
      CHECK(w == original);  // sparsity 0 keeps everything
    }
    CHECK(g.parameter("fc.bias") == bias);  // biases are not pruned
  }
}

TEST_CASE("l1-norm: magnitudes equal to the threshold are pruned, as |W| > threshold says") {
  builder b;
  auto x = b.input("x", {1, 3});
  auto y = b.add("fc", op::linear{.in_features = 3, .out_features = 2, .bias = false}, x);
  graph g = b.output(y);
  g.set_parameter(g.id("fc"), "weight", tensor({2, 3}, {0.5f, -0.5f, 0.5f, 0.5f, -0.5f, 0.5f}));
  const prune_info info = prune_weights(g, l1(prune_scope::local, 0.1));
  CHECK(info.at("fc").pruned == 6);
  CHECK(*info.at("fc").threshold == 0.5f);
}

TEST_CASE("global l1-norm: one threshold over every weight, local: one per node") {
  // fc1 holds magnitudes 1/8..8/8, fc2 9/8..16/8.
  SECTION("global 0.5: threshold between the 8th and 9th of 16 magnitudes, so all of fc1 goes") {
    graph g = two_linears();
    const prune_info info = prune_weights(g, l1(prune_scope::global, 0.5));
    CHECK(*info.at("fc1").threshold == 8.5f / 8.0f);  // rank 7.5 of 16
    CHECK(*info.at("fc2").threshold == 8.5f / 8.0f);
    CHECK(info.at("fc1").pruned == 8);
    CHECK(info.at("fc2").pruned == 0);
    CHECK(info.sparsity() == 0.5);
    CHECK(zeros(g.parameter("fc1.weight")) == 8);
    CHECK(zeros(g.parameter("fc2.weight")) == 0);
  }
  SECTION("local 0.5: each node loses its four smallest") {
    graph g = two_linears();
    const prune_info info = prune_weights(g, l1(prune_scope::local, 0.5));
    CHECK(*info.at("fc1").threshold == 4.5f / 8.0f);   // rank 3.5 of 8
    CHECK(*info.at("fc2").threshold == 12.5f / 8.0f);
    CHECK(info.at("fc1").pruned == 4);
    CHECK(info.at("fc2").pruned == 4);
  }
  SECTION("local with per-node sparsities; unlisted nodes use the default") {
    graph g = two_linears();
    prune_options o = l1(prune_scope::local, 0.0);
    o.weight.per_node.insert_or_assign("fc2", 0.25);
    const tensor fc1 = g.parameter("fc1.weight");
    const prune_info info = prune_weights(g, o);
    CHECK(info.at("fc1").pruned == 0);
    CHECK(g.parameter("fc1.weight") == fc1);
    CHECK(info.at("fc2").pruned == 2);  // rank 0.25·7 = 1.75: magnitudes 9/8 and 10/8
    CHECK(*info.at("fc2").threshold == 10.75f / 8.0f);
  }
}

TEST_CASE("random: deterministic by seed, near the target, independent per node") {
  const auto model = [] {
    builder b(3);
    auto x = b.input("x", {1, 512});
    auto h = b.add("fc1", op::linear{.in_features = 512, .out_features = 256}, x);
    auto y = b.add("fc2", op::linear{.in_features = 256, .out_features = 128}, h);
    return b.output(y);
  };
  const auto run_with = [&](std::uint64_t seed, double fc1_sparsity) {
    graph g = model();
    prune_options o{.weight = {.method = prune_method::random, .sparsity = 0.3}, .seed = seed};
    o.weight.per_node.insert_or_assign("fc1", fc1_sparsity);
    return std::pair{prune_weights(g, o), std::move(g)};
  };
  const auto [a, ga] = run_with(7, 0.3);
  const auto [b, gb] = run_with(7, 0.3);
  const auto [c, gc] = run_with(8, 0.3);
  const auto [d, gd] = run_with(7, 0.9);

  CHECK(a.at("fc1").mask == b.at("fc1").mask);
  CHECK(ga.parameter("fc1.weight") == gb.parameter("fc1.weight"));
  CHECK_FALSE(a.at("fc1").mask == c.at("fc1").mask);
  // fc2's mask depends on the seed and its own name, not on fc1's settings.
  CHECK(a.at("fc2").mask == d.at("fc2").mask);
  CHECK_FALSE(a.at("fc2").mask == c.at("fc2").mask);

  // 131072 draws: the binomial standard deviation of the fraction is 0.0013.
  CHECK(a.at("fc1").sparsity() == Approx(0.3).margin(0.01));
  CHECK(d.at("fc1").sparsity() == Approx(0.9).margin(0.01));
  CHECK_FALSE(a.at("fc1").threshold.has_value());

  // The weight is mask · W.
  const graph original = model();
  const tensor& w0 = original.parameter("fc1.weight");
  const tensor& w = ga.parameter("fc1.weight");
  const tensor& mask = a.at("fc1").mask;
  bool all_match = true;
  for (std::size_t i = 0; i < w.size(); ++i) all_match = all_match && w.data()[i] == w0.data()[i] * mask.data()[i];
  CHECK(all_match);
  CHECK(zeros(w) == a.at("fc1").pruned);
}

TEST_CASE("conv1d and conv2d are pruned, other ops are not, metadata records the sparsity") {
  builder b;
  auto x = b.input("x", {1, 3, 8, 8});
  auto h = b.add("conv", op::conv2d{.in_channels = 3, .out_channels = 4, .kernel_size = {3}}, x);
  h = b.add("bn", op::batch_norm2d{.num_features = 4}, h);
  auto s = b.input("s", {1, 2, 10});
  auto k = b.add("conv1", op::conv1d{.in_channels = 2, .out_channels = 3, .kernel_size = {5}}, s);
  graph g = b.output(h, k);
  const tensor bn_weight = g.parameter("bn.weight");

  const prune_info info = prune_weights(g, l1(prune_scope::local, 0.5));
  REQUIRE(info.weights.size() == 2);
  CHECK(info.weights[0].node == "conv");
  CHECK(info.weights[1].node == "conv1");
  // builder weights are distinct random floats: floor(0.5·(n−1)) + 1 pruned.
  CHECK(info.at("conv").pruned == 108 / 2);           // n = 4·3·3·3 = 108: floor(53.5) + 1
  CHECK(info.at("conv1").pruned == (30 - 1) / 2 + 1); // n = 3·2·5 = 30: floor(14.5) + 1
  CHECK(info.at("conv").mask.shape() == shape{4, 3, 3, 3});
  CHECK(g.parameter("bn.weight") == bn_weight);

  const statistic& recorded = g.at("conv").meta.software.args.at("weight").stat.at("pruning");
  CHECK(std::get<double>(recorded.at("sparsity")) == info.at("conv").sparsity());
  CHECK(std::get<double>(recorded.at("target")) == 0.5);
}

TEST_CASE("prune in a pipeline") {
  graph g = two_linears();
  const auto result = run(std::move(g), prune(l1(prune_scope::global, 0.5)));
  CHECK(result.get<prune_info>().at("fc1").pruned == 8);
  CHECK(zeros(result.graph.parameter("fc1.weight")) == 8);
}

TEST_CASE("prune: bad configurations are errors that say what to change") {
  graph g = two_linears();
  const graph untouched = g;

  prune_options channel = l1(prune_scope::local, 0.5);
  channel.weight.granularity = prune_granularity::channel;
  CHECK_THROWS_WITH(prune_weights(g, channel), Catch::Contains("\"channel\" is not implemented") &&
                                                   Catch::Contains("elementwise"));

  CHECK_THROWS_WITH(prune_weights(g, l1(prune_scope::local, 1.5)), Catch::Contains("weight.sparsity is 1.5"));
  CHECK_THROWS_WITH(prune_weights(g, l1(prune_scope::local, std::nan(""))), Catch::Contains("[0, 1]"));

  prune_options global_map = l1(prune_scope::global, 0.5);
  global_map.weight.per_node.insert_or_assign("fc1", 0.5);
  CHECK_THROWS_WITH(prune_weights(g, global_map), Catch::Contains("only local scope"));

  prune_options typo = l1(prune_scope::local, 0.5);
  typo.weight.per_node.insert_or_assign("fc3", 0.5);
  CHECK_THROWS_WITH(prune_weights(g, typo), Catch::Contains("\"fc3\"") && Catch::Contains("did you mean fc1 or fc2"));

  prune_options not_target = l1(prune_scope::local, 0.5);
  not_target.weight.per_node.insert_or_assign("relu", 0.5);
  CHECK_THROWS_WITH(prune_weights(g, not_target), Catch::Contains("relu, a relu"));

  prune_options activation = l1(prune_scope::local, 0.5);
  activation.activation.sparsity = 0.3;
  CHECK_THROWS_WITH(prune_weights(g, activation), Catch::Contains("activation pruning is not implemented"));

  CHECK(g == untouched);  // every error comes before any weight changes

  CHECK_THROWS_WITH(prune_method_from_string("l1"), Catch::Contains("did you mean l1-norm"));
  CHECK_THROWS_WITH(prune_granularity_from_string("element"),
                    Catch::Contains("did you mean elementwise") && Catch::Contains("\"elementwise\", \"channel\""));
  CHECK(prune_method_from_string("l1-norm") == prune_method::l1_norm);
  CHECK(prune_scope_from_string("global") == prune_scope::global);
  CHECK(to_string(prune_method::l1_norm) == "l1-norm");

  builder b;
  auto x = b.input("x", {1, 2});
  auto y = b.add("fc", op::linear{.in_features = 2, .out_features = 2}, x);
  graph with_nan = b.output(y);
  with_nan.set_parameter(with_nan.id("fc"), "weight", tensor({2, 2}, {1.0f, std::nanf(""), 2.0f, 3.0f}));
  CHECK_THROWS_WITH(prune_weights(with_nan, l1(prune_scope::local, 0.5)), Catch::Contains("fc's weight holds NaN"));
}
