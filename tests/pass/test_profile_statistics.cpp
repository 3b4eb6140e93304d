// add_software_metadata and profile_statistics on a small builder MLP: activation statistics
// equal those of the concatenated batches computed by plain loops, weight statistics those of
// the parameter tensors; progress, info and the errors for bad configurations.

#include <mase/ir/builder.hpp>
#include <mase/pass/add_common_metadata.hpp>
#include <mase/pass/init_metadata.hpp>
#include <mase/pass/profile_statistics.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

using namespace mase;

namespace {

constexpr std::int64_t batch = 4;
constexpr std::int64_t in_features = 6;
constexpr std::int64_t hidden = 5;

graph mlp() {
  builder b(7);
  auto x = b.input("x", {batch, in_features});
  auto h = b.add("fc1", op::linear{.in_features = in_features, .out_features = hidden}, x);
  h = b.add("relu", op::relu{}, h);
  auto y = b.add("fc2", op::linear{.in_features = hidden, .out_features = 3}, h);
  return b.output(y);
}

auto prepared() { return mlp() | init_metadata | add_common_metadata | add_software_metadata; }

// Batch k: x[r][c] = sin(1.7·(k·batch + r) + 0.3·c) · (1 + c).
tensor input_batch(int k) {
  tensor t({batch, in_features});
  for (std::int64_t r = 0; r < batch; ++r)
    for (std::int64_t c = 0; c < in_features; ++c)
      t.values()[static_cast<std::size_t>(r * in_features + c)] =
          static_cast<float>(std::sin(1.7 * static_cast<double>(k * batch + r) + 0.3 * static_cast<double>(c)) *
                             static_cast<double>(1 + c));
  return t;
}

// Yields batches 0, 1, …, available − 1, counting the calls.
struct counting_generator {
  int available;
  int* calls;
  std::optional<ordered_map<tensor>> operator()() const {
    const int k = (*calls)++;
    if (k >= available) return std::nullopt;
    ordered_map<tensor> b;
    b.insert_or_assign("x", input_batch(k));
    return b;
  }
};

// Rows of batches 0 … n−1, one after another.
std::vector<float> concatenated_inputs(int n) {
  std::vector<float> all;
  for (int k = 0; k < n; ++k) {
    const tensor t = input_batch(k);
    all.insert(all.end(), t.values().begin(), t.values().end());
  }
  return all;
}

// fc1 of the rows, by hand: y[r][o] = Σ_i x[r][i]·W[o][i] + b[o], in float as the model runs.
std::vector<float> fc1_by_hand(const graph& g, const std::vector<float>& x) {
  const tensor& w = g.parameter("fc1.weight");
  const tensor& b = g.parameter("fc1.bias");
  const std::size_t rows = x.size() / in_features;
  std::vector<float> y(rows * hidden);
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t o = 0; o < hidden; ++o) {
      double acc = b.values()[o];
      for (std::size_t i = 0; i < in_features; ++i) acc += static_cast<double>(x[r * in_features + i]) * w.values()[o * in_features + i];
      y[r * hidden + o] = static_cast<float>(acc);
    }
  return y;
}

double unbiased_variance(const std::vector<double>& v) {
  double mean = 0;
  for (double x : v) mean += x;
  mean /= static_cast<double>(v.size());
  double ss = 0;
  for (double x : v) ss += (x - mean) * (x - mean);
  return ss / static_cast<double>(v.size() - 1);
}

// The q quantile with linear interpolation, from the sorted values.
double quantile_by_sorting(std::vector<float> v, double q) {
  std::sort(v.begin(), v.end());
  const double rank = q * static_cast<double>(v.size() - 1);
  const auto below = static_cast<std::size_t>(rank);
  return v[below] + (rank - static_cast<double>(below)) * (v[below + 1] - v[below]);
}

const statistic& stat_of(const graph& g, std::string_view node, std::string_view entry, std::string_view name) {
  return g.at(node).meta.software.args.at(entry).stat.at(name);
}
double number(const statistic& s, std::string_view field) { return std::get<double>(s.at(field)); }
const std::vector<double>& list(const statistic& s, std::string_view field) {
  return std::get<std::vector<double>>(s.at(field));
}

std::vector<std::string> keys_of(const ordered_map<software_entry>& m) {
  std::vector<std::string> out;
  for (const auto& [k, v] : m) out.push_back(k);
  return out;
}

}  // namespace

TEST_CASE("add_software_metadata creates an empty entry per tensor argument and data_out_0") {
  auto g = prepared();
  const software_meta& fc1 = g.at("fc1").meta.software;
  CHECK(keys_of(fc1.args) == std::vector<std::string>{"data_in_0", "weight", "bias"});
  CHECK(keys_of(fc1.results) == std::vector<std::string>{"data_out_0"});
  CHECK(fc1.args.at("weight").stat.empty());
  CHECK(g.at("x").meta.software.args.empty());
  CHECK(keys_of(g.at("x").meta.software.results) == std::vector<std::string>{"data_out_0"});
  CHECK(keys_of(g.at("relu").meta.software.args) == std::vector<std::string>{"data_in_0"});
  CHECK(keys_of(g.at("output").meta.software.args) == std::vector<std::string>{"data_in_0"});
  CHECK(g.at("output").meta.software.results.empty());

  // Running it again resets what was profiled.
  g.at("fc1").meta.software.args.at("weight").stat["range_min_max"]["min"] = 1.0;
  g = std::move(g) | add_software_metadata;
  CHECK(g.at("fc1").meta.software.args.at("weight").stat.empty());
}

TEST_CASE("activation statistics equal those of the concatenated batches") {
  const auto g = prepared();
  int calls = 0;
  std::vector<std::pair<std::size_t, std::size_t>> progress;
  const auto result = run(g, profile_statistics({
                                 .by = profile_by::name,
                                 .target_activation_nodes = {"fc1", "relu"},
                                 .activation_statistics = {stats::range_min_max_options{},
                                                           stats::variance_precise_options{.dims = stats::stat_dims::elementwise()},
                                                           stats::range_quantile_options{.quantile = 0.9},
                                                           stats::record_options{}},
                                 .inputs = counting_generator{5, &calls},
                                 .num_samples = 10,  // ceil(10 / 4) = 3 batches
                                 .progress = [&](std::size_t done, std::size_t total) { progress.emplace_back(done, total); },
                             }));
  static_assert(detail::contains_fact<fact::statistics, std::decay_t<decltype(result.graph)>::established>::value);
  const graph& out = result.graph;
  const auto& info = result.get<profile_statistics_info>();
  CHECK(info == profile_statistics_info{.weight_nodes = 0, .weight_entries = 0, .activation_nodes = 2,
                                        .activation_entries = 2, .batches = 3, .samples = 12});
  CHECK(calls == 3);
  CHECK(progress == std::vector<std::pair<std::size_t, std::size_t>>{{1, 3}, {2, 3}, {3, 3}});

  const std::vector<float> x = concatenated_inputs(3);  // [12, 6]
  const std::size_t rows = 12;

  // fc1's data_in_0: the inputs themselves.
  const statistic& mm = stat_of(out, "fc1", "data_in_0", "range_min_max");
  CHECK(number(mm, "min") == *std::min_element(x.begin(), x.end()));
  CHECK(number(mm, "max") == *std::max_element(x.begin(), x.end()));
  CHECK(number(mm, "count") == 72.0);

  // Element-wise over the 12 row samples: per column of a row [1, 6], unbiased.
  const statistic& var = stat_of(out, "fc1", "data_in_0", "variance_precise");
  REQUIRE(list(var, "variance").size() == in_features);
  for (std::size_t c = 0; c < in_features; ++c) {
    std::vector<double> column;
    double mean = 0;
    for (std::size_t r = 0; r < rows; ++r) column.push_back(x[r * in_features + c]);
    for (double v : column) mean += v / static_cast<double>(rows);
    CHECK(list(var, "variance")[c] == Approx(unbiased_variance(column)).epsilon(1e-12));
    CHECK(list(var, "mean")[c] == Approx(mean).epsilon(1e-12));
  }
  CHECK(number(var, "count") == 12.0);

  // Quantiles of all 72 values: 0.9 at rank 0.9 · 71 = 63.9, 0.1 at rank 7.1 of the sorted values.
  const statistic& q = stat_of(out, "fc1", "data_in_0", "range_quantile");
  CHECK(number(q, "max") == Approx(quantile_by_sorting(x, 0.9)).epsilon(1e-12));
  CHECK(number(q, "min") == Approx(quantile_by_sorting(x, 1 - 0.9)).epsilon(1e-12));

  // record: the rows in order, 12 samples of [1, 6].
  const statistic& rec = stat_of(out, "fc1", "data_in_0", "record");
  CHECK(list(rec, "data") == std::vector<double>(x.begin(), x.end()));
  CHECK(number(rec, "count") == 12.0);

  // relu's data_in_0 is fc1's output: the observer hands each node the tensors it read.
  const std::vector<float> y = fc1_by_hand(g, x);
  const statistic& relu_mm = stat_of(out, "relu", "data_in_0", "range_min_max");
  CHECK(number(relu_mm, "min") == Approx(*std::min_element(y.begin(), y.end())).epsilon(1e-5));
  CHECK(number(relu_mm, "max") == Approx(*std::max_element(y.begin(), y.end())).epsilon(1e-5));
  CHECK(number(relu_mm, "count") == 60.0);

  // Entries not targeted stay empty; results are not profiled (as in MASE).
  CHECK(out.at("fc1").meta.software.args.at("weight").stat.empty());
  CHECK(out.at("fc2").meta.software.args.at("data_in_0").stat.empty());
  CHECK(out.at("fc1").meta.software.results.at("data_out_0").stat.empty());
}

TEST_CASE("weight statistics are those of the parameter tensors, fed once") {
  const auto g = prepared();
  const auto result = run(g, profile_statistics({
                                 .by = profile_by::type,
                                 .target_weight_nodes = {"linear"},
                                 .weight_statistics = {stats::range_min_max_options{.abs = true},
                                                       stats::variance_precise_options{},
                                                       stats::variance_online_options{.dims = stats::stat_dims::elementwise()}},
                             }));
  const graph& out = result.graph;
  CHECK(result.get<profile_statistics_info>() ==
        profile_statistics_info{.weight_nodes = 2, .weight_entries = 4, .activation_nodes = 0,
                                .activation_entries = 0, .batches = 0, .samples = 0});
  for (const char* node : {"fc1", "fc2"})
    for (const char* role : {"weight", "bias"}) {
      INFO(node << "." << role);
      const tensor& w = g.parameter(fmt::format("{}.{}", node, role));
      std::vector<double> values(w.values().begin(), w.values().end());
      double max_abs = 0, min_abs = std::numeric_limits<double>::infinity();
      for (double v : values) {
        max_abs = std::max(max_abs, std::abs(v));
        min_abs = std::min(min_abs, std::abs(v));
      }
      const statistic& mm = stat_of(out, node, role, "range_min_max");
      CHECK(number(mm, "max") == max_abs);
      CHECK(number(mm, "min") == min_abs);
      CHECK(number(mm, "count") == static_cast<double>(values.size()));
      CHECK(number(stat_of(out, node, role, "variance_precise"), "variance") ==
            Approx(unbiased_variance(values)).epsilon(1e-12));
      // One sample: an element-wise variance is NA, as MASE gives it.
      CHECK(std::holds_alternative<not_available>(stat_of(out, node, role, "variance_online").at("variance")));
    }
  CHECK(out.at("fc1").meta.software.args.at("data_in_0").stat.empty());
}

TEST_CASE("a generator that runs out early ends the profiling") {
  int calls = 0;
  const graph g = prepared() | profile_statistics({.target_activation_nodes = {"linear"},
                                                   .activation_statistics = {stats::abs_mean_options{}},
                                                   .inputs = counting_generator{2, &calls},
                                                   .num_samples = 100});
  CHECK(calls == 3);  // two batches, then nullopt
  CHECK(number(stat_of(g, "fc1", "data_in_0", "abs_mean"), "count") == 48.0);
  CHECK(number(stat_of(g, "fc2", "data_in_0", "abs_mean"), "count") == 40.0);
}

TEST_CASE("bad configurations are errors naming the fix") {
  const auto g = prepared();
  const auto profile = [&](profile_statistics_pass p) { return run(g, p); };
  CHECK_THROWS_WITH(profile({.by = profile_by::name, .target_weight_nodes = {"fc3"}}),
                    Catch::Contains("target_weight_nodes names \"fc3\", which is not a node") &&
                        Catch::Contains("did you mean fc1 or fc2?"));
  CHECK_THROWS_WITH(profile({.by = profile_by::type, .target_activation_nodes = {"linaer"}}),
                    Catch::Contains("\"linaer\", which is not an op type") && Catch::Contains("did you mean linear?"));
  CHECK_THROWS_WITH(profile({.target_activation_nodes = {"relu"}, .num_samples = 4}),
                    Catch::Contains("no input generator"));
  int calls = 0;
  CHECK_THROWS_WITH(profile({.target_activation_nodes = {"relu"}, .inputs = counting_generator{1, &calls}}),
                    Catch::Contains("num_samples is 0"));
  CHECK_THROWS_WITH(profile({.target_activation_nodes = {"relu"}, .inputs = counting_generator{0, &calls}, .num_samples = 4}),
                    Catch::Contains("gave no batch"));
  CHECK_THROWS_WITH(profile({.target_weight_nodes = {"linear"},
                             .weight_statistics = {stats::abs_mean_options{}, stats::abs_mean_options{}}}),
                    Catch::Contains("weight_statistics lists abs_mean twice"));
  CHECK_THROWS_WITH(profile_by_from_string("names"), Catch::Contains("\"name\" or \"type\""));
  CHECK(profile_by_from_string("type") == profile_by::type);
}
