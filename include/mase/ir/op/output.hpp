#pragma once
// The graph's results: one input per result, passed through.

#include <mase/ir/op/op_base.hpp>

namespace mase::op {

struct output {
  static constexpr std::string_view name = "output";
  using kind = mase::kind::output;
  static constexpr op_category category = op_category::interface;
  static constexpr arity inputs{1, arity::unbounded};
  static constexpr auto attributes() { return attribute_list{}; }

  constexpr shape_result infer_shapes(std::span<const shape> in) const {
    shape_list results;
    for (const shape& s : in) results.push_back(s);
    return shape_ok(results);
  }
  constexpr bool operator==(const output&) const = default;
};

}  // namespace mase::op
