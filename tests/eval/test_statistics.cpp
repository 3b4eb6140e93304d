// Statistics (eval/statistics.hpp) against numpy/torch on the same data (fixtures/stats, written by
// make_stat_fixtures.py from each statistic's definition, and checked there against MASE's own
// stat.py), against small cases worked by hand, and for streaming: the same data split into
// different sample sequences gives the same result wherever the mathematics says it must.

#include <mase/eval/statistics.hpp>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#ifndef MASE_FIXTURE_DIR
#define MASE_FIXTURE_DIR "tests/fixtures"
#endif

using namespace mase;
using namespace mase::stats;
using json = nlohmann::json;

namespace {

json load_fixtures() {
  const std::filesystem::path path = std::filesystem::path(MASE_FIXTURE_DIR) / "stats" / "stat_fixtures.json";
  std::ifstream in(path);
  REQUIRE(in.good());
  return json::parse(in);
}

option_map options_from(const json& j) {
  option_map out;
  for (const auto& [key, value] : j.items()) {
    if (value.is_boolean()) out[key] = value.get<bool>();
    else if (value.is_number_integer()) out[key] = value.get<std::int64_t>();
    else if (value.is_number()) out[key] = value.get<double>();
    else if (value.is_string()) out[key] = value.get<std::string>();
    else out[key] = value.get<std::vector<std::int64_t>>();
  }
  return out;
}

bool close(double have, double want) {
  if (std::isnan(want)) return std::isnan(have);
  return std::abs(have - want) <= 1e-10 * std::max(1.0, std::abs(want));
}

std::vector<std::string> keys(const statistic& s) {
  std::vector<std::string> out;
  for (const auto& [k, v] : s) out.push_back(k);
  return out;
}

double number(const statistic& s, std::string_view field) { return std::get<double>(s.at(field)); }
const std::vector<double>& list(const statistic& s, std::string_view field) {
  return std::get<std::vector<double>>(s.at(field));
}
bool na(const statistic& s, std::string_view field) { return std::holds_alternative<not_available>(s.at(field)); }

tensor make(const shape& s, std::vector<float> values) { return tensor(s, std::move(values)); }

// Rows of `width` values, as samples of `per_sample` rows each.
std::vector<tensor> split_rows(const std::vector<float>& values, std::int64_t width, std::int64_t per_sample) {
  std::vector<tensor> out;
  const auto n = static_cast<std::int64_t>(values.size());
  for (std::int64_t start = 0; start < n; start += per_sample * width) {
    const auto first = values.begin() + start;
    out.emplace_back(shape{per_sample, width}, std::vector<float>(first, first + per_sample * width));
  }
  return out;
}
// 0.5·i − 7 + (i mod 5)²: varied, with repeats and both signs.
std::vector<float> sample_values(std::size_t n) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = 0.5f * static_cast<float>(i) - 7.0f + static_cast<float>((i % 5) * (i % 5));
  return v;
}

template <class Stat>
statistic feed(Stat stat, const std::vector<tensor>& samples) {
  for (const tensor& t : samples) stat.update(t);
  return stat.compute();
}

}  // namespace

TEST_CASE("every statistic agrees with numpy/torch on the fixture data") {
  const json fixtures = load_fixtures();
  std::size_t cases = 0;
  for (const json& c : fixtures.at("cases")) {
    const std::string name = c.at("stat");
    const option_map options = options_from(c.at("options"));
    const json& set = fixtures.at("sets").at(c.at("data").get<std::string>());
    shape sample_shape;
    for (std::int64_t d : set.at("shape").get<std::vector<std::int64_t>>()) sample_shape.push_back(d);

    INFO(name << " " << c.at("options").dump() << " on set " << c.at("data").get<std::string>());
    any_statistic stat = make_statistic(name, options);
    CHECK(stat.name() == name);
    for (const json& sample : set.at("samples")) stat.update(tensor(sample_shape, sample.get<std::vector<float>>()));
    const statistic result = stat.compute();

    std::vector<std::string> want_keys;
    for (const auto& [k, v] : c.at("result").items()) want_keys.push_back(k);
    // nlohmann sorts object keys; MASE's field order is checked in the hand-worked cases.
    std::vector<std::string> have_keys = keys(result);
    std::sort(have_keys.begin(), have_keys.end());
    CHECK(have_keys == want_keys);
    for (const auto& [field, want] : c.at("result").items()) {
      INFO("field " << field);
      REQUIRE(result.contains(field));
      const stat_value& have = result.at(field);
      if (want.is_string()) {
        CHECK(want == "NA");
        CHECK(std::holds_alternative<not_available>(have));
      } else if (want.is_array()) {
        REQUIRE(std::holds_alternative<std::vector<double>>(have));
        const auto& values = std::get<std::vector<double>>(have);
        const auto expected = want.get<std::vector<double>>();
        REQUIRE(values.size() == expected.size());
        for (std::size_t i = 0; i < values.size(); ++i) {
          INFO("element " << i << ": " << values[i] << " vs " << expected[i]);
          CHECK(close(values[i], expected[i]));
        }
      } else {
        REQUIRE(std::holds_alternative<double>(have));
        INFO(std::get<double>(have) << " vs " << want.get<double>());
        CHECK(close(std::get<double>(have), want.get<double>()));
      }
    }
    ++cases;
  }
  CHECK(cases > 100);
}

TEST_CASE("variance_online over all elements keeps MASE's unbiased-times-n merge") {
  // Samples {1, 3} and {5, 7}: MASE's M2 = 2·var_unbiased{1,3} + 2·var_unbiased{5,7} + the
  // between-sample term 16·2·2/4 = 2·2 + 2·2 + 16 = 24, so variance 24/4 = 6, where the
  // population variance of {1, 3, 5, 7} is 5.
  variance_online v;
  v.update(make({1, 2}, {1, 3}));
  v.update(make({1, 2}, {5, 7}));
  const statistic s = v.compute();
  CHECK(keys(s) == std::vector<std::string>{"mean", "variance", "count"});
  CHECK(number(s, "mean") == 4.0);
  CHECK(number(s, "variance") == 6.0);
  CHECK(number(s, "count") == 4.0);

  // A one-element sample has no unbiased variance: the result is NaN, as in MASE.
  variance_online single;
  single.update(make({1, 2}, {1, 3}));
  single.update(make({1, 1}, {5}));
  CHECK(std::isnan(number(single.compute(), "variance")));

  // Reducing every dim as a list instead gives the population variance, however the data is split.
  variance_online listed({.dims = stat_dims::reduce({0, 1})});
  listed.update(make({1, 2}, {1, 3}));
  listed.update(make({1, 2}, {5, 7}));
  CHECK(list(listed.compute(), "variance") == std::vector<double>{5.0});
  CHECK(list(listed.compute(), "mean") == std::vector<double>{4.0});
}

TEST_CASE("NA exactly where MASE gives it, with MASE's fields") {
  SECTION("variance_online: fewer than two counted values") {
    variance_online v({.dims = stat_dims::elementwise()});
    v.update(make({1, 3}, {1, 2, 3}));
    const statistic s = v.compute();
    CHECK(keys(s) == std::vector<std::string>{"mean", "variance"});
    CHECK((na(s, "mean") && na(s, "variance")));
    // One sample of several elements is enough over all elements.
    variance_online all;
    all.update(make({1, 3}, {1, 2, 3}));
    CHECK(number(all.compute(), "variance") == 1.0);  // M2 = var_unbiased{1,2,3} · 3 = 3, over count 3
  }
  SECTION("variance_precise element-wise: one sample") {
    variance_precise v({.dims = stat_dims::elementwise()});
    v.update(make({1, 2}, {1, 2}));
    const statistic s = v.compute();
    CHECK(keys(s) == std::vector<std::string>{"mean", "variance", "count"});
    CHECK((na(s, "mean") && na(s, "variance")));
    CHECK(number(s, "count") == 1.0);
    variance_precise empty;
    CHECK(na(empty.compute(), "variance"));
    CHECK(number(empty.compute(), "count") == 0.0);
  }
  SECTION("range_min_max: min and max from the first value, range from the second") {
    range_min_max r;
    const statistic none = r.compute();
    CHECK(keys(none) == std::vector<std::string>{"min", "max", "range", "count"});
    CHECK((na(none, "min") && na(none, "max") && na(none, "range")));
    CHECK(number(none, "count") == 0.0);
    r.update(make({1}, {-2.5f}));
    const statistic one = r.compute();
    CHECK(number(one, "min") == -2.5);
    CHECK(number(one, "max") == -2.5);
    CHECK(na(one, "range"));
    r.update(make({1}, {4.0f}));
    CHECK(number(r.compute(), "range") == 6.5);
  }
  SECTION("range_quantile element-wise: one sample") {
    range_quantile q({.dims = stat_dims::elementwise()});
    q.update(make({1, 2}, {1, 2}));
    const statistic s = q.compute();
    CHECK((na(s, "min") && na(s, "max") && na(s, "range")));
    CHECK(number(s, "count") == 1.0);
  }
  SECTION("range_n_sigma: NA bounds with the count when the variance is NA") {
    range_n_sigma r;
    r.update(make({1}, {3.0f}));
    const statistic s = r.compute();
    CHECK(keys(s) == std::vector<std::string>{"min", "max", "range", "count"});
    CHECK((na(s, "min") && na(s, "max") && na(s, "range")));
    CHECK(number(s, "count") == 1.0);
  }
  SECTION("abs_mean: only the NA field") {
    abs_mean a({.dims = stat_dims::elementwise()});
    a.update(make({2}, {-1, 2}));
    const statistic s = a.compute();
    CHECK(keys(s) == std::vector<std::string>{"abs_mean"});
    CHECK(na(s, "abs_mean"));
    a.update(make({2}, {3, -4}));
    CHECK(list(a.compute(), "abs_mean") == std::vector<double>{2.0, 3.0});
    CHECK(keys(a.compute()) == std::vector<std::string>{"abs_mean", "count"});
  }
  SECTION("record: all NA before the first sample") {
    record r;
    const statistic s = r.compute();
    CHECK(keys(s) == std::vector<std::string>{"data", "count", "size_in_bytes"});
    CHECK((na(s, "data") && na(s, "count") && na(s, "size_in_bytes")));
  }
}

TEST_CASE("worked small cases") {
  SECTION("range_quantile interpolates as torch.quantile") {
    // 0, 1, …, 10: the 0.975 quantile sits at rank 9.75, the 0.025 one at rank 0.25.
    std::vector<float> v(11);
    for (int i = 0; i <= 10; ++i) v[static_cast<std::size_t>(i)] = static_cast<float>(10 - i);  // unsorted
    range_quantile q;
    q.update(make({11}, v));
    const statistic s = q.compute();
    CHECK(number(s, "max") == Approx(9.75).epsilon(1e-14));
    CHECK(number(s, "min") == Approx(0.25).epsilon(1e-14));
    CHECK(number(s, "range") == Approx(9.5).epsilon(1e-14));
    CHECK(number(s, "count") == 11.0);
    range_quantile median({.quantile = 0.5});
    median.update(make({4}, {4, 1, 3, 2}));
    CHECK(number(median.compute(), "max") == 2.5);
    CHECK(number(median.compute(), "min") == 2.5);
  }
  SECTION("range_n_sigma precise: mean ± n·σ with the unbiased σ") {
    range_n_sigma r({.var_mode = variance_mode::precise, .num_sigma = 2});
    r.update(make({2}, {1, 3}));
    r.update(make({2}, {5, 7}));
    const statistic s = r.compute();
    const double sigma = std::sqrt(20.0 / 3.0);
    CHECK(number(s, "min") == Approx(4 - 2 * sigma));
    CHECK(number(s, "max") == Approx(4 + 2 * sigma));
    CHECK(number(s, "range") == Approx(4 * sigma));
    CHECK(number(s, "count") == 4.0);
  }
  SECTION("abs applies before the statistic") {
    range_min_max r({.abs = true});
    r.update(make({3}, {-5, 2, 1}));
    CHECK(number(r.compute(), "min") == 1.0);
    CHECK(number(r.compute(), "max") == 5.0);
  }
  SECTION("listed dims reduce those dims, keep the rest in row-major order") {
    // Samples [2, 3]; reducing dim 1 keeps one position per row.
    range_min_max r({.dims = stat_dims::reduce({-1})});
    r.update(make({2, 3}, {1, 9, 2, -4, 0, 3}));
    r.update(make({2, 3}, {0, 5, 5, 8, 1, 1}));
    const statistic s = r.compute();
    CHECK(list(s, "min") == std::vector<double>{0, -4});
    CHECK(list(s, "max") == std::vector<double>{9, 8});
    CHECK(number(s, "count") == 6.0);
    abs_mean a({.dims = stat_dims::reduce({0})});
    a.update(make({2, 3}, {1, -9, 2, -4, 0, 3}));
    CHECK(list(a.compute(), "abs_mean") == std::vector<double>{2.5, 4.5, 2.5});
  }
  SECTION("NaN propagates through min, max and quantiles, as in torch") {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    range_min_max r;
    r.update(make({3}, {1, nan, 2}));
    r.update(make({1}, {0}));
    CHECK(std::isnan(number(r.compute(), "min")));
    CHECK(std::isnan(number(r.compute(), "max")));
    range_min_max e({.dims = stat_dims::elementwise()});
    e.update(make({2}, {1, nan}));
    e.update(make({2}, {0, 5}));
    CHECK(list(e.compute(), "min")[0] == 0.0);
    CHECK(std::isnan(list(e.compute(), "min")[1]));
    range_quantile q;
    q.update(make({3}, {1, nan, 2}));
    CHECK(std::isnan(number(q.compute(), "max")));
  }
  SECTION("record concatenates along dim 0, or stacks on a new dim") {
    record r;
    r.update(make({2, 3}, {1, 2, 3, 4, 5, 6}));
    r.update(make({1, 3}, {7, 8, 9}));
    const statistic s = r.compute();
    CHECK(list(s, "data") == std::vector<double>{1, 2, 3, 4, 5, 6, 7, 8, 9});
    CHECK(number(s, "count") == 2.0);
    CHECK(number(s, "size_in_bytes") == 36.0);
    CHECK(r.data_shape() == shape{3, 3});
    CHECK(r.data().values()[8] == 9.0f);
    CHECK_THROWS_WITH(r.update(make({1, 2}, {1, 2})), Catch::Contains("cannot be concatenated"));
    record stacked({.add_new_dim_before_concat = true});
    stacked.update(make({2, 3}, {1, 2, 3, 4, 5, 6}));
    stacked.update(make({2, 3}, {1, 2, 3, 4, 5, 6}));
    CHECK(stacked.data_shape() == shape{2, 2, 3});
    CHECK_THROWS_WITH(stacked.update(make({1, 3}, {1, 2, 3})), Catch::Contains("need equal shapes"));
    record scalar;
    CHECK_THROWS_WITH(scalar.update(make({}, {1})), Catch::Contains("add_new_dim_before_concat"));
  }
}

TEST_CASE("streaming: results do not depend on how the data is split where the mathematics says so") {
  // 12 rows of 5 values, fed as 12 samples of one row, 4 of three rows, 1 of twelve rows.
  const std::vector<float> data = sample_values(60);
  const auto by_1 = split_rows(data, 5, 1);
  const auto by_3 = split_rows(data, 5, 3);
  const auto by_12 = split_rows(data, 5, 12);
  REQUIRE((by_1.size() == 12 && by_3.size() == 4 && by_12.size() == 1));

  SECTION("min and max over all elements: exactly") {
    const statistic a = feed(range_min_max{}, by_1);
    CHECK(a == feed(range_min_max{}, by_3));
    CHECK(a == feed(range_min_max{}, by_12));
    CHECK(number(a, "count") == 60.0);
  }
  SECTION("quantiles and the precise variance over all elements: exactly (the same multiset)") {
    const statistic q = feed(range_quantile{}, by_1);
    CHECK(q == feed(range_quantile{}, by_3));
    CHECK(q == feed(range_quantile{}, by_12));
    const statistic v = feed(variance_precise{}, by_1);
    CHECK(v == feed(variance_precise{}, by_3));
  }
  SECTION("abs_mean over all elements, and the listed-dims variance: to rounding") {
    const double m1 = number(feed(abs_mean{}, by_1), "abs_mean");
    CHECK(number(feed(abs_mean{}, by_3), "abs_mean") == Approx(m1).epsilon(1e-14));
    CHECK(number(feed(abs_mean{}, by_12), "abs_mean") == Approx(m1).epsilon(1e-14));
    // Reducing dims 0 and 1 keeps nothing: the population variance of all 60 values.
    const variance_online_options all_dims{.dims = stat_dims::reduce({0, 1})};
    const statistic v1 = feed(variance_online(all_dims), by_1);
    const statistic v12 = feed(variance_online(all_dims), by_12);
    CHECK(list(v12, "variance")[0] == Approx(list(v1, "variance")[0]).epsilon(1e-13));
    CHECK(list(v12, "mean")[0] == Approx(list(v1, "mean")[0]).epsilon(1e-13));
    CHECK(number(v1, "count") == 60.0);
    // … which equals the precise (unbiased) variance scaled by (n − 1)/n.
    const double precise = number(feed(variance_precise{}, by_1), "variance");
    CHECK(list(v1, "variance")[0] == Approx(precise * 59.0 / 60.0).epsilon(1e-13));
    // Per column (reducing dim 0 only): the same for each of the 5 columns.
    const variance_online_options columns{.dims = stat_dims::reduce({0})};
    const auto c1 = list(feed(variance_online(columns), by_1), "variance");
    const auto c3 = list(feed(variance_online(columns), by_3), "variance");
    REQUIRE(c1.size() == 5);
    for (std::size_t i = 0; i < 5; ++i) CHECK(c3[i] == Approx(c1[i]).epsilon(1e-13));
  }
  SECTION("MASE's all-elements online variance depends on the split (its documented quirk)") {
    const double v1 = number(feed(variance_online{}, by_3), "variance");
    const double v12 = number(feed(variance_online{}, by_12), "variance");
    CHECK(v1 != Approx(v12));
    // With one sample it is the unbiased variance: M2 = var_unbiased · n, divided by n.
    CHECK(v12 == Approx(number(feed(variance_precise{}, by_12), "variance")).epsilon(1e-13));
  }
}

TEST_CASE("statistics by name and option map, with errors naming what is wrong") {
  CHECK(statistic_names.size() == 7);
  for (std::string_view name : statistic_names) CHECK(make_statistic(name).name() == name);

  option_map opts;
  opts["dims"] = std::string("NA");  // MASE's TOML spelling of None
  opts["abs"] = true;
  opts["device"] = std::string("cpu");
  const auto parsed = std::get<range_min_max_options>(parse_statistic("range_min_max", opts));
  CHECK(parsed.dims == stat_dims::elementwise());
  CHECK(parsed.abs);
  option_map sigma;
  sigma["num_sigma"] = std::int64_t{2};
  sigma["var_mode"] = std::string("precise");
  sigma["dims"] = std::vector<std::int64_t>{2, 0};
  const auto s = std::get<range_n_sigma_options>(parse_statistic("range_n_sigma", sigma));
  CHECK(s.num_sigma == 2.0);
  CHECK(s.var_mode == variance_mode::precise);
  CHECK(s.dims == stat_dims::reduce({2, 0}));

  CHECK_THROWS_WITH(parse_statistic("range_minmax"),
                    Catch::Contains("unknown statistic \"range_minmax\"") && Catch::Contains("did you mean range_min_max") &&
                        Catch::Contains("record, variance_online, variance_precise"));
  option_map bad_key;
  bad_key["dim"] = std::string("all");
  CHECK_THROWS_WITH(parse_statistic("range_min_max", bad_key),
                    Catch::Contains("no option \"dim\"") && Catch::Contains("did you mean dims") &&
                        Catch::Contains("its options are dims, abs"));
  option_map bad_dims;
  bad_dims["dims"] = true;
  CHECK_THROWS_WITH(parse_statistic("abs_mean", bad_dims), Catch::Contains("option \"dims\" must be"));
  option_map bad_mode;
  bad_mode["var_mode"] = std::string("exact");
  CHECK_THROWS_WITH(parse_statistic("range_n_sigma", bad_mode), Catch::Contains("\"online\" or \"precise\""));
  option_map bad_q;
  bad_q["quantile"] = 1.5;
  CHECK_THROWS_WITH(parse_statistic("range_quantile", bad_q), Catch::Contains("[0, 1]"));
  option_map bad_device;
  bad_device["device"] = std::int64_t{0};
  CHECK_THROWS_WITH(parse_statistic("record", bad_device), Catch::Contains("\"device\" must be a string"));

  ordered_map<option_map> by_name;
  by_name["range_quantile"] = {};
  by_name["abs_mean"] = {};
  const auto list_of = parse_statistics(by_name);
  REQUIRE(list_of.size() == 2);
  CHECK(statistic_name(list_of[0]) == "range_quantile");
  CHECK(statistic_name(list_of[1]) == "abs_mean");
}

TEST_CASE("bad samples are errors naming the statistic") {
  range_min_max r({.dims = stat_dims::reduce({3})});
  CHECK_THROWS_WITH(r.update(make({2, 3}, {1, 2, 3, 4, 5, 6})), Catch::Contains("range_min_max") &&
                                                                    Catch::Contains("dim 3 is out of range"));
  variance_online twice({.dims = stat_dims::reduce({1, -1})});
  CHECK_THROWS_WITH(twice.update(make({2, 3}, {1, 2, 3, 4, 5, 6})), Catch::Contains("listed twice"));
  variance_online e({.dims = stat_dims::elementwise()});
  e.update(make({1, 3}, {1, 2, 3}));
  CHECK_THROWS_WITH(e.update(make({1, 2}, {1, 2})), Catch::Contains("element-wise statistics need equal shapes"));
  abs_mean a;
  CHECK_THROWS_WITH(a.update(std::vector<float>{1, 2}, shape{3}), Catch::Contains("3 values, but 2 were given"));
  CHECK_THROWS_WITH(range_quantile({.quantile = -0.1}), Catch::Contains("quantile must be in [0, 1]"));
}
