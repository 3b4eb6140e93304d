// The ILP sampler: its assignments are optimal for its own model (checked against every
// assignment, enumerated), its cost model is exact for a cost that adds up over nodes (the
// measured average bits of each solution equal the predicted sum), and the solutions are
// evaluated as trials.
#include <mase/ir/builder.hpp>
#include <mase/search/ilp.hpp>
#include <mase/search/study.hpp>

#include "../search_fixtures.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <vector>

using namespace mase;
using namespace mase::search;
using namespace mase_search_test;

TEST_CASE("ilp: each budget's assignment is the best its model allows, and the cost model is exact") {
  const graph g = small_mlp();
  const search_space space = build_search_space(g, {.by = quantize_by::name,
                                                    .seed = {{"default",
                                                              {{"name", {std::string("integer")}},
                                                               {"data_in_width", ints({4, 8})},
                                                               {"data_in_frac_width", {std::string("NA")}},
                                                               {"weight_width", ints({2, 3, 4, 6, 8})},
                                                               {"bias_width", ints({8})}}}}});
  ilp_sampler ilp({.budgets = 12});
  const study s = run_search(g, space, ilp, {objectives::output_mse(), objectives::average_bitwidth()}, small_data(),
                             {.trials = 100, .batch_size = 4});
  const auto& table = ilp.table();
  REQUIRE(table.size() == 3);  // fc1, relu, fc2
  CHECK(table[0].combinations.size() == 2 * 5);
  CHECK(table[1].combinations.size() == 2);
  CHECK(ilp.measurements() == 1 + 10 + 2 + 10);
  REQUIRE(!s.trials.empty());

  // Every assignment, enumerated: for each trial's predicted cost, none cheaper-or-equal has a
  // smaller summed sensitivity than the solution's.
  const auto combination_of = [&](std::size_t subject, const point& p) {
    for (std::size_t c = 0; c < table[subject].combinations.size(); ++c) {
      bool same = true;
      for (std::size_t i = 0; i < table[subject].dimensions.size(); ++i)
        same = same && table[subject].combinations[c][i] == p[table[subject].dimensions[i]];
      if (same) return c;
    }
    FAIL("a solution's values are no combination of its subject");
    return std::size_t{0};
  };
  for (const trial& t : s.trials) {
    REQUIRE(t.ok());
    double sensitivity = 0, cost = 0;
    for (std::size_t subject = 0; subject < 3; ++subject) {
      const std::size_t c = combination_of(subject, t.choices);
      sensitivity += table[subject].sensitivity[c];
      cost += table[subject].cost[c];
    }
    double best = std::numeric_limits<double>::infinity();
    for (std::size_t a = 0; a < table[0].combinations.size(); ++a)
      for (std::size_t b = 0; b < table[1].combinations.size(); ++b)
        for (std::size_t c = 0; c < table[2].combinations.size(); ++c)
          if (table[0].cost[a] + table[1].cost[b] + table[2].cost[c] <= cost + 1e-9)
            best = std::min(best, table[0].sensitivity[a] + table[1].sensitivity[b] + table[2].sensitivity[c]);
    CHECK(sensitivity == Approx(best).margin(1e-12));
    // Average weight bits add up over nodes: float32's 32 plus each subject's change.
    CHECK(t.values[1] == Approx(32.0 + cost));
  }
  // The cheapest budget gives every weight 2 bits; the dearest, the least sensitive assignment.
  bool two_bits = false;
  for (const trial& t : s.trials) two_bits = two_bits || t.values[1] == 2.0;
  CHECK(two_bits);
}

TEST_CASE("ilp needs two objectives") {
  const graph g = small_mlp();
  const search_space space = build_search_space(
      g, {.by = quantize_by::type, .seed = {{"linear", {{"name", {std::string("integer")}}, {"data_in_width", ints({8})}, {"weight_width", ints({4, 8})}}}}});
  ilp_sampler ilp;
  CHECK_THROWS_WITH(run_search(g, space, ilp, {objectives::output_mse()}, small_data(), {.trials = 10}),
                    Catch::Contains("exactly two objectives"));
}
