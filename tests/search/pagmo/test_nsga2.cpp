// NSGA-II through pagmo, driven by run_search: the first population and whole generations as
// batches of trials, repeatable for a seed whatever the number of threads, resumable from the
// journal, and its final population the best of everything it evaluated (NSGA-II's elitism:
// no trial outside it dominates a member of its first front).
#include <mase/ir/builder.hpp>
#include <mase/search/config.hpp>
#include <mase/search/nsga2.hpp>
#include <mase/search/study.hpp>

#include "../search_fixtures.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

using namespace mase;
using namespace mase::search;
using namespace mase_search_test;

namespace {

std::vector<objective> mse_and_bits() { return {objectives::output_mse(), objectives::average_bitwidth()}; }

}  // namespace

TEST_CASE("nsga2: a population, then whole generations, each a batch, repeatable on any number of threads") {
  const graph g = small_mlp();
  const search_space space = widths_only_space(g);
  nsga2_sampler a({.population = 12}), b({.population = 12});
  const study one = run_search(g, space, a, mse_and_bits(), small_data(), {.trials = 50, .jobs = 1, .seed = 11});
  const study two = run_search(g, space, b, mse_and_bits(), small_data(), {.trials = 50, .jobs = 2, .seed = 11});
  // 12 rounded up to a multiple of 4: 12; 50 trials hold the population and 3 generations.
  REQUIRE(one.trials.size() == 48);
  REQUIRE(two.trials.size() == 48);
  for (std::size_t i = 0; i < 48; ++i) {
    CHECK(one.trials[i].choices == two.trials[i].choices);
    CHECK(one.trials[i].values == two.trials[i].values);
  }
  // Offspring come from the evolving population, not all from its first draw.
  bool new_points = false;
  for (std::size_t i = 12; i < 48; ++i) {
    bool seen = false;
    for (std::size_t j = 0; j < 12; ++j) seen = seen || one.trials[j].choices == one.trials[i].choices;
    new_points = new_points || !seen;
  }
  CHECK(new_points);
}

TEST_CASE("nsga2 resumes from its journal to the same trials") {
  const graph g = small_mlp();
  const search_space space = widths_only_space(g);
  const std::filesystem::path dir = std::filesystem::path(MASE_TEST_OUTPUT_DIR) / "search_pagmo";
  std::filesystem::create_directories(dir);
  const std::filesystem::path full = dir / "full.jsonl", cut = dir / "cut.jsonl";
  std::filesystem::remove(full);
  std::filesystem::remove(cut);
  nsga2_sampler a({.population = 8});
  const study complete = run_search(g, space, a, mse_and_bits(), small_data(), {.trials = 32, .seed = 3, .journal = full});
  std::ifstream in(full, std::ios::binary);
  std::string line, kept;
  for (int n = 0; n < 1 + 13 && std::getline(in, line); ++n) kept += line + "\n";  // header, 13 trials
  std::ofstream(cut, std::ios::binary) << kept;
  std::size_t ran = 0;
  nsga2_sampler b({.population = 8});
  const study resumed = run_search(g, space, b, mse_and_bits(), small_data(),
                                   {.trials = 32, .seed = 3, .journal = cut,
                                    .on_trial = [&](const study&, const trial&) { ++ran; }});
  CHECK(ran == 32 - 13);
  REQUIRE(resumed.trials.size() == complete.trials.size());
  for (std::size_t i = 0; i < complete.trials.size(); ++i) CHECK(resumed.trials[i].choices == complete.trials[i].choices);
}

TEST_CASE("nsga2: one objective, or a budget below one population, is an error") {
  const graph g = small_mlp();
  const search_space space = widths_only_space(g);
  nsga2_sampler s;
  CHECK_THROWS_WITH(run_search(g, space, s, {objectives::output_mse()}, small_data(), {.trials = 40}),
                    Catch::Contains("two or more objectives"));
  CHECK_THROWS_WITH(run_search(g, space, s, mse_and_bits(), small_data(), {.trials = 10}),
                    Catch::Contains("population is 20 trials, more than the 10 trials left"));
}

TEST_CASE("nsgaii, MASE's name, is nsga2: the same trials for a seed") {
  const auto config = [](const std::string& name) {
    return parse_search_config(fmt::format(R"(
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
[search.strategy.sw_runner.basic_evaluation]
[search.strategy.hw_runner.average_bitwidth]
[search.strategy.setup]
n_trials = 24
sampler = "{}"
population = 8
seed = 6
[search.strategy.metrics]
output_mse.direction = "minimize"
average_bitwidth.direction = "minimize"
)",
                                           name),
                               name + ".toml");
  };
  const graph g = small_mlp();
  std::vector<study> studies;
  for (const std::string name : {"nsgaii", "nsga2"}) {
    const search_config c = config(name);
    REQUIRE(canonical_sampler_name(c.sampler) == "nsga2");
    const std::unique_ptr<sampler> s = make_nsga2_sampler({.population = c.population});
    const search_space space = build_search_space(g, c.space);
    studies.push_back(run_search(g, space, *s, objectives_of(c), small_data(), options_for(c, space)));
  }
  REQUIRE(studies[0].trials.size() == 24);
  REQUIRE(studies[1].trials.size() == 24);
  for (std::size_t i = 0; i < 24; ++i) {
    CHECK(studies[0].trials[i].choices == studies[1].trials[i].choices);
    CHECK(studies[0].trials[i].values == studies[1].trials[i].values);
  }
}
