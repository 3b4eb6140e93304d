// run_search on a small MLP: trials repeat exactly for a seed whatever the number of threads,
// objective values equal what the quantize pass, the evaluator and calculate_avg_bits give when
// run here by hand, the front is the non-dominated set, and a journal cut anywhere resumes to the
// same study.
#include <mase/eval/evaluator.hpp>
#include <mase/ir/builder.hpp>
#include <mase/pass/add_common_metadata.hpp>
#include <mase/pass/init_metadata.hpp>
#include <mase/pass/pipeline.hpp>
#include <mase/pass/quantization_report.hpp>
#include <mase/pass/quantize.hpp>
#include <mase/search/hardware_objective.hpp>
#include <mase/search/report.hpp>
#include <mase/search/study.hpp>

#include <nlohmann/json.hpp>

#include "search_fixtures.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
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

// Widths only: every fraction width comes from the measured ranges.
search_space widths_space(const graph& g) {
  const choice_list na{std::string("NA")};
  return build_search_space(g, {.by = quantize_by::name,
                                .seed = {{"default",
                                          {{"name", {std::string("integer")}},
                                           {"data_in_width", ints({4, 6, 8})},
                                           {"data_in_frac_width", na},
                                           {"weight_width", ints({2, 3, 4, 6, 8})},
                                           {"bias_width", ints({8})}}}}});
}

std::vector<objective> agreement_and_bits() { return {objectives::agreement(), objectives::average_bitwidth()}; }

std::string file_text(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::filesystem::path scratch(const std::string& name) {
  const std::filesystem::path dir = std::filesystem::path(MASE_TEST_OUTPUT_DIR) / "search";
  std::filesystem::create_directories(dir);
  std::filesystem::remove(dir / name);
  return dir / name;
}

}  // namespace

TEST_CASE("a seeded search repeats exactly, on one thread or two") {
  const graph g = small_mlp();
  const search_space space = widths_space(g);
  const evaluation_data data = small_data();
  tpe_sampler a, b;
  const study one = run_search(g, space, a, agreement_and_bits(), data, {.trials = 24, .jobs = 1, .batch_size = 4, .seed = 3});
  const study two = run_search(g, space, b, agreement_and_bits(), data, {.trials = 24, .jobs = 2, .batch_size = 4, .seed = 3});
  REQUIRE(one.trials.size() == 24);
  REQUIRE(two.trials.size() == 24);
  for (std::size_t i = 0; i < 24; ++i) {
    CHECK(one.trials[i].number == i);
    CHECK(one.trials[i].choices == two.trials[i].choices);
    CHECK(one.trials[i].values == two.trials[i].values);
  }
  random_sampler c;
  const study other = run_search(g, space, c, agreement_and_bits(), data, {.trials = 8, .batch_size = 4, .seed = 4});
  bool differs = false;
  for (std::size_t i = 0; i < 8; ++i) differs = differs || other.trials[i].choices != one.trials[i].choices;
  CHECK(differs);
}

TEST_CASE("enqueued points are the first trials, then the sampler's") {
  const graph g = small_mlp();
  const search_space space = widths_space(g);
  const std::vector<point> uniform = uniform_points(space);
  REQUIRE(uniform.size() == 3 * 5);
  random_sampler sampler;
  const study s = run_search(g, space, sampler, agreement_and_bits(), small_data(),
                             {.trials = 20, .batch_size = 4, .seed = 1, .enqueued = uniform});
  REQUIRE(s.trials.size() == 20);
  for (std::size_t i = 0; i < uniform.size(); ++i) CHECK(s.trials[i].choices == uniform[i]);
  CHECK(s.sampled == 5);
  // A uniform point's average weight bits are its one weight width.
  for (std::size_t i = 0; i < uniform.size(); ++i)
    CHECK(s.trials[i].values[1] == std::get<std::int64_t>(space.dimensions[3].choices[uniform[i][3]]));
}

TEST_CASE("a trial's values are what quantize, the evaluator and calculate_avg_bits give") {
  const graph g = small_mlp();
  const search_space space = widths_space(g);
  const evaluation_data data = small_data();
  random_sampler sampler;
  const study s = run_search(g, space, sampler, {objectives::agreement(), objectives::average_bitwidth(), objectives::output_mse()},
                             data, {.trials = 6, .batch_size = 3, .seed = 9, .mode = eval_mode::bit_exact});
  const graph base(g | init_metadata | add_common_metadata(data.inputs, {.add_value = false}));
  evaluator float_model(base);
  const tensor reference = float_model.run(data.inputs)[0];
  for (const trial& t : s.trials) {
    REQUIRE(t.ok());
    const graph quantized = graph_with<fact::common_metadata>(base) | quantize(s.config_of(g, t));
    evaluator exact(quantized, eval_mode::bit_exact);
    const tensor out = exact.run(data.inputs)[0];
    std::size_t same = 0;
    double squared = 0;
    for (std::int64_t r = 0; r < 64; ++r) {
      const float* a = out.data() + r * 4;
      const float* b = reference.data() + r * 4;
      same += std::max_element(a, a + 4) - a == std::max_element(b, b + 4) - b;
      for (int k = 0; k < 4; ++k) squared += (static_cast<double>(a[k]) - b[k]) * (static_cast<double>(a[k]) - b[k]);
    }
    CHECK(t.values[0] == static_cast<double>(same) / 64);
    // Weights: fc1 8x16 and fc2 16x4 at their chosen widths (relu has no weight dimensions).
    const double w1 = std::get<std::int64_t>(space.dimensions[3].choices[t.choices[3]]);
    const double w2 = std::get<std::int64_t>(space.dimensions[11].choices[t.choices[11]]);
    CHECK(space.dimension_name(3) == "fc1.weight_width");
    CHECK(space.dimension_name(11) == "fc2.weight_width");
    CHECK(t.values[1] == Approx((w1 * 128 + w2 * 64) / 192));
    CHECK(t.values[1] == calculate_avg_bits(quantized).w_avg_bit);
    CHECK(t.values[2] == Approx(squared / (64 * 4)));
  }
  // The front: exactly the trials no other trial dominates, each set of equal values once (its
  // first trial; the others listed with it).
  const std::vector<study::front_point> front = s.distinct_front();
  for (std::size_t i = 0; i < s.trials.size(); ++i) {
    bool dominated = false, earlier_same = false;
    for (const trial& o : s.trials) dominated = dominated || dominates(s.minimized(o), s.minimized(s.trials[i]));
    for (std::size_t j = 0; j < i; ++j) earlier_same = earlier_same || s.minimized(s.trials[j]) == s.minimized(s.trials[i]);
    const auto first = std::find_if(front.begin(), front.end(), [&](const auto& p) { return p.index == i; });
    const auto other = std::find_if(front.begin(), front.end(), [&](const auto& p) {
      return std::find(p.same.begin(), p.same.end(), i) != p.same.end();
    });
    CHECK((first != front.end()) == (!dominated && !earlier_same));
    CHECK((other != front.end()) == (!dominated && earlier_same));
  }
}

TEST_CASE("a journal cut anywhere resumes to the same study, running only the missing trials") {
  const graph g = small_mlp();
  const search_space space = widths_space(g);
  const evaluation_data data = small_data();
  const std::filesystem::path full = scratch("full.jsonl"), cut = scratch("cut.jsonl");
  tpe_sampler first;
  const search_options options{.trials = 20, .jobs = 2, .batch_size = 4, .seed = 5, .journal = full};
  const study complete = run_search(g, space, first, agreement_and_bits(), data, options);

  // Keep the header, 9 trial lines and half of the next: a kill during trial 10's write.
  const std::string text = file_text(full);
  std::size_t at = 0;
  for (int line = 0; line < 10; ++line) at = text.find('\n', at) + 1;
  const std::size_t next = text.find('\n', at);
  std::ofstream(cut, std::ios::binary) << text.substr(0, at) << text.substr(at, (next - at) / 2);

  std::size_t ran = 0;
  search_options again = options;
  again.journal = cut;
  again.on_trial = [&](const study&, const trial&) { ++ran; };
  tpe_sampler second;
  const study resumed = run_search(g, space, second, agreement_and_bits(), data, again);
  CHECK(ran == 11);
  REQUIRE(resumed.trials.size() == 20);
  for (std::size_t i = 0; i < 20; ++i) {
    CHECK(resumed.trials[i].choices == complete.trials[i].choices);
    CHECK(resumed.trials[i].values == complete.trials[i].values);
  }
  // The resumed journal holds every trial once, each line whole.
  std::istringstream lines(file_text(cut));
  std::string line;
  std::size_t count = 0;
  while (std::getline(lines, line)) ++count;
  CHECK(count == 21);

  // Run to completion again: nothing is left to do.
  ran = 0;
  tpe_sampler third;
  (void)run_search(g, space, third, agreement_and_bits(), data, again);
  CHECK(ran == 0);
}

TEST_CASE("a search resumed with fewer trials than its journal holds keeps them all: its front is the journal's") {
  const graph g = small_mlp();
  const search_space space = widths_space(g);
  const evaluation_data data = small_data();
  const std::filesystem::path path = scratch("fewer.jsonl");
  tpe_sampler first;
  const search_options options{.trials = 16, .jobs = 2, .batch_size = 4, .seed = 3, .journal = path};
  const study complete = run_search(g, space, first, agreement_and_bits(), data, options);

  std::size_t ran = 0;
  search_options fewer = options;
  fewer.trials = 6;
  fewer.on_trial = [&](const study&, const trial&) { ++ran; };
  tpe_sampler second;
  const study resumed = run_search(g, space, second, agreement_and_bits(), data, fewer);
  CHECK(ran == 0);
  REQUIRE(resumed.trials.size() == 16);
  for (std::size_t i = 0; i < 16; ++i) {
    CHECK(resumed.trials[i].number == i);
    CHECK(resumed.trials[i].choices == complete.trials[i].choices);
  }
  CHECK(resumed.pareto_front() == complete.pareto_front());
  CHECK(resumed.best() == complete.best());
}

TEST_CASE("a journal from another search is refused and left as it was") {
  const graph g = small_mlp();
  const search_space space = widths_space(g);
  const std::filesystem::path path = scratch("other.jsonl");
  random_sampler sampler;
  (void)run_search(g, space, sampler, agreement_and_bits(), small_data(), {.trials = 4, .seed = 1, .journal = path});
  const std::string before = file_text(path);
  CHECK_THROWS_WITH(run_search(g, space, sampler, agreement_and_bits(), small_data(), {.trials = 4, .seed = 2, .journal = path}),
                    Catch::Contains("other.jsonl:1") && Catch::Contains("\"seed\" differs"));
  CHECK(file_text(path) == before);

  const std::filesystem::path foreign = scratch("notes.txt");
  std::ofstream(foreign) << "my notes\n";
  CHECK_THROWS_WITH(run_search(g, space, sampler, agreement_and_bits(), small_data(), {.trials = 4, .journal = foreign}),
                    Catch::Contains("not a mase search journal"));
  CHECK(file_text(foreign) == "my notes\n");
  // Nor is a file without a whole line shortened (only a cut line of a journal is dropped).
  std::ofstream(foreign, std::ios::binary | std::ios::trunc) << "my notes";
  CHECK_THROWS_WITH(run_search(g, space, sampler, agreement_and_bits(), small_data(), {.trials = 4, .journal = foreign}),
                    Catch::Contains("not a mase search journal"));
  CHECK(file_text(foreign) == "my notes");
}

TEST_CASE("grid stops at the end of its space, and a config every trial fails on is an error") {
  const graph g = small_mlp();
  const search_space space = build_search_space(
      g, {.by = quantize_by::type,
          .seed = {{"linear",
                    {{"name", {std::string("integer")}},
                     {"data_in_width", ints({8})},
                     {"data_in_frac_width", ints({4})},
                     {"weight_width", ints({4, 8})},
                     {"weight_frac_width", ints({2, 3})},
                     {"bias_width", ints({8})},
                     {"bias_frac_width", ints({4})}}}}});
  grid_sampler grid;
  const study s = run_search(g, space, grid, {objectives::average_bitwidth()}, small_data(), {.trials = 50});
  CHECK(s.trials.size() == 4);

  const search_space broken = build_search_space(
      g, {.by = quantize_by::type, .seed = {{"linear", {{"name", {std::string("integer")}}, {"weight_width", ints({0})}}}}});
  CHECK_THROWS_WITH(run_search(g, broken, grid, {objectives::average_bitwidth()}, small_data(), {.trials = 4}),
                    Catch::Contains("every trial of the first batch failed"));
}

TEST_CASE("the outputs: pareto.csv holds the front, pareto.svg every successful trial") {
  const graph g = small_mlp();
  const search_space space = widths_space(g);
  random_sampler sampler;
  const study s = run_search(g, space, sampler, agreement_and_bits(), small_data(), {.trials = 16, .seed = 2});
  const std::vector<std::size_t> front = s.pareto_front();
  const std::string csv = pareto_csv(s);
  std::istringstream lines(csv);
  std::string header, line;
  std::getline(lines, header);
  CHECK(header.starts_with("trial,same_objectives,agreement,average_bitwidth,fc1.name,fc1.data_in_width"));
  std::size_t rows = 0;
  while (std::getline(lines, line)) {
    REQUIRE(rows < front.size());
    CHECK(line.starts_with(std::to_string(s.trials[front[rows]].number) + ","));
    ++rows;
  }
  CHECK(rows == front.size());

  const std::string svg = pareto_svg(s);
  const std::string red_fill = "fill=\"#d62728\"";
  std::size_t circles = 0, red = 0;
  for (std::size_t at = svg.find("<circle"); at != std::string::npos; at = svg.find("<circle", at + 1)) {
    ++circles;
    red += svg.compare(svg.find("fill=", at), red_fill.size(), red_fill) == 0;
  }
  // One panel (two objectives), every trial succeeded; trials with a front point's values are
  // drawn once, as that point.
  std::size_t repeats = 0;
  for (const study::front_point& p : s.distinct_front()) repeats += p.same.size();
  CHECK(circles == s.trials.size() - repeats);
  CHECK(red == front.size());
  CHECK(svg.find(fmt::format("{} trials, {} distinct points on the front", s.trials.size(), front.size())) != std::string::npos);
}

// A journal whose trials score the same as each other, values written by hand (as a long search
// on a finite data set gives them), read back by a resumed search that runs nothing.
TEST_CASE("the front lists each objective vector once: its first trial, the others counted") {
  const graph g = small_mlp();
  const search_space space = widths_space(g);
  const std::filesystem::path path = scratch("duplicates.jsonl");
  const std::vector<objective> objs = {objectives::output_mse(), objectives::average_bitwidth()};
  grid_sampler grid;
  const search_options options{.trials = 10, .seed = 9, .journal = path};
  (void)run_search(g, space, grid, objs, small_data(), options);

  // (output_mse, average bits), both minimized. Trials 2 and 7 repeat trial 0, 4 repeats 1, 9
  // repeats 3; 6 and 8 are dominated (by 1 and by 0). The front, by hand: 0 (+2), 1 (+1), 3 (+1), 5.
  const std::vector<std::pair<double, double>> values = {{0.5, 4}, {0.3, 6}, {0.5, 4}, {0.2, 8}, {0.3, 6},
                                                         {0.6, 3}, {0.4, 6}, {0.5, 4}, {0.7, 5}, {0.2, 8}};
  std::istringstream lines(file_text(path));
  std::string line, rewritten;
  std::getline(lines, line);
  rewritten = line + "\n";
  while (std::getline(lines, line)) {
    nlohmann::json j = nlohmann::json::parse(line);
    const auto [mse, bits] = values.at(j.at("trial").get<std::size_t>());
    j["values"] = {{"output_mse", mse}, {"average_bitwidth", bits}};
    rewritten += j.dump() + "\n";
  }
  std::ofstream(path, std::ios::binary | std::ios::trunc) << rewritten;

  std::size_t ran = 0;
  search_options resume = options;
  resume.on_trial = [&](const study&, const trial&) { ++ran; };
  grid_sampler again;
  const study s = run_search(g, space, again, objs, small_data(), resume);
  CHECK(ran == 0);
  REQUIRE(s.trials.size() == 10);  // the journal keeps every trial
  const std::vector<study::front_point> front = s.distinct_front();
  REQUIRE(front.size() == 4);
  const std::vector<std::pair<std::size_t, std::vector<std::size_t>>> expected = {{0, {2, 7}}, {1, {4}}, {3, {9}}, {5, {}}};
  for (std::size_t k = 0; k < 4; ++k) {
    CHECK(front[k].index == expected[k].first);
    CHECK(front[k].same == expected[k].second);
  }
  CHECK(s.pareto_front() == std::vector<std::size_t>{0, 1, 3, 5});
  CHECK(s.best() == std::size_t{3});  // the least output_mse, 0.2, first at trial 3

  // pareto.csv: one row per point, with the count of trials of the same values.
  std::istringstream csv(pareto_csv(s));
  std::vector<std::string> rows;
  while (std::getline(csv, line)) {
    std::size_t end = 0;
    for (int field = 0; field < 4 && end != std::string::npos; ++field) end = line.find(',', end + (field > 0));
    rows.push_back(line.substr(0, end));  // the trial, the count and the two objectives
  }
  CHECK(rows == std::vector<std::string>{"trial,same_objectives,output_mse,average_bitwidth", "0,2,0.5,4", "1,1,0.3,6",
                                         "3,1,0.2,8", "5,0,0.6,3"});

  // pareto.svg: the 4 front points red, once each, their titles counting the rest; the 2
  // dominated trials grey; the 4 repeats not drawn again.
  const std::string svg = pareto_svg(s);
  std::size_t circles = 0;
  for (std::size_t at = svg.find("<circle"); at != std::string::npos; at = svg.find("<circle", at + 1)) ++circles;
  CHECK(circles == 6);
  CHECK(svg.find("<title>trial 0 (+2 with the same objectives)</title>") != std::string::npos);
  CHECK(svg.find("<title>trial 5</title>") != std::string::npos);
  CHECK(svg.find("<title>trial 2") == std::string::npos);
  CHECK(svg.find("10 trials, 4 distinct points on the front (red), 4 more trials with the same objectives") !=
        std::string::npos);
}

TEST_CASE("bops: per sample, each multiply-accumulate's data bits times its weight bits") {
  const graph g = small_mlp();
  const search_space space = widths_space(g);
  REQUIRE(space.dimension_name(1) == "fc1.data_in_width");
  REQUIRE(space.dimension_name(3) == "fc1.weight_width");
  REQUIRE(space.dimension_name(9) == "fc2.data_in_width");
  REQUIRE(space.dimension_name(11) == "fc2.weight_width");
  random_sampler sampler;
  const study s = run_search(g, space, sampler, {objectives::bops()}, small_data(), {.trials = 8, .seed = 4});
  const auto width = [&](const trial& t, std::size_t d) {
    return static_cast<double>(std::get<std::int64_t>(space.dimensions[d].choices[t.choices[d]]));
  };
  for (const trial& t : s.trials) {
    REQUIRE(t.ok());
    // fc1: 8 x 16 products per sample; fc2: 16 x 4.
    CHECK(t.values[0] == 128 * width(t, 1) * width(t, 3) + 64 * width(t, 9) * width(t, 11));
  }
}

// The MLP at 4 lanes: fc1 (8 → 16) reads 2 chunks of 4 inputs for each of 4 groups of 4
// outputs, 8 cycles a sample; fc2 (16 → 4) 4 chunks for 1 group, 4 cycles; the input 2 beats.
// Each layer has 16 multipliers, on DSP slices when data and weight widths add to 9 bits or more
// (yosys's rule), else in LUTs.
TEST_CASE("hardware objectives: cycles per sample and DSP slices of every trial's design") {
  const graph g = small_mlp();
  const search_space space = build_search_space(g, {.by = quantize_by::name,
                                                    .seed = {{"default",
                                                              {{"name", {std::string("fixed")}},
                                                               {"data_in_width", ints({4, 8})},
                                                               {"data_in_frac_width", {std::string("NA")}},
                                                               {"weight_width", ints({4, 5, 8})},
                                                               {"weight_frac_width", {std::string("NA")}},
                                                               {"bias_width", ints({8})},
                                                               {"bias_frac_width", {std::string("NA")}},
                                                               {"data_out_width", ints({8})},
                                                               {"data_out_frac_width", {std::string("NA")}}}}},
                                                    .source = {},
                                                    .hardware_formats = true});
  const hardware_options lanes{.max_parallelism = {4, 4, 4, 4}};
  random_sampler sampler;
  const study s = run_search(g, space, sampler,
                             {objectives::hardware("cycles_per_sample", lanes), objectives::hardware("dsps", lanes)},
                             small_data(), {.trials = 12, .seed = 5});
  const auto width = [&](const trial& t, std::string_view name) {
    for (std::size_t d = 0; d < space.dimensions.size(); ++d)
      if (space.dimension_name(d) == name) return std::get<std::int64_t>(space.dimensions[d].choices[t.choices[d]]);
    FAIL("no dimension " << name);
    return std::int64_t{0};
  };
  for (const trial& t : s.trials) {
    INFO(t.failure);
    REQUIRE(t.ok());
    CHECK(t.values[0] == 8);
    const double fc1 = width(t, "fc1.data_in_width") + width(t, "fc1.weight_width") >= 9 ? 16 : 0;
    const double fc2 = width(t, "fc2.data_in_width") + width(t, "fc2.weight_width") >= 9 ? 16 : 0;
    CHECK(t.values[1] == fc1 + fc2);
  }
  CHECK_THROWS_WITH(objectives::hardware("area"), Catch::Contains("not a hardware metric"));
}
