#pragma once
// -x, element-wise (operator.neg / torch.neg).

#include <mase/ir/op/shape_rules.hpp>

namespace mase::op {

struct neg {
  static constexpr std::string_view name = "neg";
  using kind = mase::kind::builtin_func;
  static constexpr op_category category = op_category::elementwise;
  static constexpr arity inputs{1, 1};
  static constexpr auto attributes() { return attribute_list{}; }

  constexpr shape_result infer_shapes(std::span<const shape> in) const { return shape_rules::same_as_input(in); }
  constexpr bool operator==(const neg&) const = default;
};

}  // namespace mase::op
