#pragma once
// What the search tests share: a small MLP, data for it, integer choice lists.
#include <mase/ir/builder.hpp>
#include <mase/search/objective.hpp>
#include <mase/search/space.hpp>

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <string>

namespace mase_search_test {

// x [batch, 8] → fc1 (8→16) → relu → fc2 (16→4) → output
inline mase::graph small_mlp(std::int64_t batch = 64) {
  using namespace mase;
  builder b;
  auto x = b.input("x", {batch, 8});
  auto h = b.add("fc1", op::linear{.in_features = 8, .out_features = 16}, x);
  h = b.add("relu", op::relu{}, h);
  h = b.add("fc2", op::linear{.in_features = 16, .out_features = 4}, h);
  return b.output(h);
}

// 64 samples of small_mlp's input, in [-1, 1].
inline mase::search::evaluation_data small_data() {
  mase::tensor x({64, 8});
  for (std::size_t i = 0; i < x.size(); ++i) x.data()[i] = static_cast<float>(std::cos(0.61 * static_cast<double>(i)));
  return {.inputs = {{"x", x}}, .labels = {}, .calibration = {}};
}

inline mase::search::choice_list ints(std::initializer_list<std::int64_t> values) {
  mase::search::choice_list list;
  for (std::int64_t v : values) list.emplace_back(v);
  return list;
}

// Widths only, per node: data 3, 4, 6 or 8 bits, weights 2 to 8, bias 8; every fraction width
// from the measured ranges.
inline mase::search::search_space widths_only_space(const mase::graph& g) {
  using namespace mase::search;
  return build_search_space(g, {.by = mase::quantize_by::name,
                                .seed = {{"default",
                                          {{"name", {std::string("integer")}},
                                           {"data_in_width", ints({3, 4, 6, 8})},
                                           {"data_in_frac_width", {std::string("NA")}},
                                           {"weight_width", ints({2, 3, 4, 6, 8})},
                                           {"bias_width", ints({8})}}}}});
}

}  // namespace mase_search_test
