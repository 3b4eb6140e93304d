// MASE's search TOML (the layout of its configs/examples/search_*.toml) read into a search
// config, every bad key a mase::error naming it; and quantize configs written as TOML that
// load_quantize_config reads back equal (what best.toml relies on).
#include <mase/io/quant_config.hpp>
#include <mase/search/config.hpp>

#include <catch2/catch.hpp>

#include <string>

using namespace mase;
using namespace mase::search;

namespace {

// As MASE writes it (configs/examples/search_vgg7_mixed_precision_ptq.toml's layout), with
// mase's seed, batch_size and eval keys.
const std::string mase_search_toml = R"(
[search.search_space]
name = "graph/quantize/mixed_precision_ptq"

[search.search_space.setup]
by = "name"

[search.search_space.seed.default.config]
name = ["integer"]
data_in_width = [4, 8]
data_in_frac_width = ["NA"]
weight_width = [2, 4, 8]
weight_frac_width = ["NA"]

[search.search_space.seed.fc1.config]
name = ["integer"]
data_in_width = [8]
data_in_frac_width = [4, 5]

[search.strategy]
name = "optuna"
eval_mode = true

[search.strategy.sw_runner.basic_evaluation]
data_loader = "val_dataloader"
num_samples = 512

[search.strategy.hw_runner.average_bitwidth]
compare_to = 32

[search.strategy.setup]
n_jobs = 2
n_trials = 20
timeout = 20000
sampler = "tpe"
sum_scaled_metrics = false
direction = "maximize"
seed = 7
batch_size = 4
eval = "bit-exact"

[search.strategy.metrics]
accuracy.scale = 1.0
accuracy.direction = "maximize"
average_bitwidth.scale = 0.2
average_bitwidth.direction = "minimize"
)";

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const std::size_t at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

}  // namespace

TEST_CASE("MASE's search TOML is read as MASE writes it") {
  const search_config c = parse_search_config(mase_search_toml, "s.toml");
  CHECK(c.space.by == quantize_by::name);
  REQUIRE(c.space.seed.size() == 2);
  CHECK(c.space.seed[0].key == "default");
  REQUIRE(c.space.seed[0].choices.size() == 5);
  CHECK(c.space.seed[0].choices[2].first == "data_in_frac_width");  // the file's order
  CHECK(c.space.seed[0].choices[3].second.size() == 3);
  CHECK(c.space.seed[1].key == "fc1");
  CHECK(c.sampler == "tpe");
  CHECK(c.options.trials == 20);
  CHECK(c.options.jobs == 2);
  CHECK(c.options.seed == 7);
  CHECK(c.options.batch_size == 4);
  CHECK(c.options.mode == eval_mode::bit_exact);
  CHECK(c.options.timeout_seconds == 20000.0);
  CHECK(c.num_samples == 512);
  REQUIRE(c.metrics.size() == 2);
  CHECK(c.metrics[0].name == "accuracy");
  CHECK(c.metrics[1].scale == 0.2);
  CHECK(c.metrics[1].sense == direction::minimize);
  const std::vector<objective> objs = objectives_of(c);
  REQUIRE(objs.size() == 2);
  CHECK(objs[1].name == "average_bitwidth");

  search_config summed = c;
  summed.sum_scaled_metrics = true;
  REQUIRE(objectives_of(summed).size() == 1);
  CHECK(objectives_of(summed)[0].name == "scaled_sum");
}

TEST_CASE("a bad search config is an error naming the key") {
  CHECK_THROWS_WITH(parse_search_config(replaced(mase_search_toml, "sampler = \"tpe\"", "sampler = \"cmaes\""), "s.toml"),
                    Catch::Contains("s.toml:35") && Catch::Contains("search.strategy.setup.sampler") &&
                        Catch::Contains("unknown sampler \"cmaes\""));
  CHECK_THROWS_WITH(parse_search_config(replaced(mase_search_toml, "weight_width = [2, 4, 8]", "weight_width = []"), "s.toml"),
                    Catch::Contains("search.search_space.seed.default.config.weight_width is an empty list"));
  CHECK_THROWS_WITH(parse_search_config(replaced(mase_search_toml, "[search.strategy.hw_runner.average_bitwidth]\ncompare_to = 32", ""),
                                        "s.toml"),
                    Catch::Contains("search.strategy.metrics.average_bitwidth: no runner measures it") &&
                        Catch::Contains("[search.strategy.hw_runner.average_bitwidth]"));
  CHECK_THROWS_WITH(parse_search_config(replaced(mase_search_toml, "n_trials = 20", "n_trails = 20"), "s.toml"),
                    Catch::Contains("unknown key \"n_trails\""));
  CHECK_THROWS_WITH(parse_search_config(replaced(mase_search_toml, "accuracy.scale", "top5.scale"), "s.toml"),
                    Catch::Contains("search.strategy.metrics.top5"));
  CHECK_THROWS_WITH(parse_search_config(replaced(mase_search_toml, "by = \"name\"", "by = \"layer\""), "s.toml"),
                    Catch::Contains("search.search_space.setup.by must be"));
}

TEST_CASE("a quantize config written as TOML reads back equal") {
  quantize_config c{.by = quantize_by::name};
  c.entries.emplace_back("fc1", quant_config{{"name", std::string("integer")},
                                             {"data_in_width", std::int64_t{8}},
                                             {"data_in_frac_width", std::int64_t{-2}},
                                             {"weight_width", std::int64_t{4}},
                                             {"weight_frac_width", std::int64_t{9}},
                                             {"floor", true}});
  c.entries.emplace_back("relu", bypass{});
  c.entries.emplace_back("fc2", quant_config{{"name", std::string("block_fp")},
                                             {"data_in_width", std::int64_t{6}},
                                             {"data_in_exponent_width", std::int64_t{8}},
                                             {"data_in_exponent_bias", std::int64_t{127}},
                                             {"data_in_block_size", std::vector<std::int64_t>{1, 16}}});
  const std::string text = quantize_config_to_toml(c, "written by a test\nsecond line");
  CHECK(text.starts_with("# written by a test\n# second line\n[passes.quantize]\nby = \"name\"\n"));
  const quantize_config back = parse_quantize_config(text, "best.toml");
  CHECK(back == c);
}

TEST_CASE("the hardware runner gives the cost model's metrics and quantizes results for the hardware") {
  const std::string toml =
      replaced(replaced(mase_search_toml, "[search.strategy.hw_runner.average_bitwidth]\ncompare_to = 32",
                        "[search.strategy.hw_runner.hardware]\nmax_parallelism = [8, 2]"),
               "average_bitwidth.scale = 0.2\naverage_bitwidth.direction = \"minimize\"",
               "luts.direction = \"minimize\"\ncycles_per_sample.direction = \"minimize\"");
  const search_config c = parse_search_config(toml, "s.toml");
  REQUIRE(c.hardware.has_value());
  CHECK(c.hardware->max_parallelism == std::array<int, 4>{8, 2, 2, 2});  // the last value repeats, as -p does
  CHECK(c.space.hardware_formats);
  const std::vector<objective> objs = objectives_of(c);
  REQUIRE(objs.size() == 3);
  CHECK(objs[1].name == "luts");
  CHECK(objs[2].name == "cycles_per_sample");
  CHECK(objs[2].sense == direction::minimize);

  // A hardware metric without the runner names the table to add.
  CHECK_THROWS_WITH(parse_search_config(replaced(mase_search_toml, "average_bitwidth.scale", "dsps.scale"), "s.toml"),
                    Catch::Contains("search.strategy.metrics.dsps: no runner measures it") &&
                        Catch::Contains("[search.strategy.hw_runner.hardware]"));
  CHECK_THROWS_WITH(parse_search_config(replaced(toml, "max_parallelism = [8, 2]", "max_parallelism = [0]"), "s.toml"),
                    Catch::Contains("search.strategy.hw_runner.hardware.max_parallelism"));
  CHECK_THROWS_WITH(parse_search_config(replaced(toml, "max_parallelism = [8, 2]", "max_parallelism = []"), "s.toml"),
                    Catch::Contains("must be a list of 1 to 4 lane counts"));
  CHECK_THROWS_WITH(parse_search_config(replaced(toml, "max_parallelism = [8, 2]", "lanes = 4"), "s.toml"),
                    Catch::Contains("unknown key \"lanes\""));
}
