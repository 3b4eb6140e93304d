#pragma once
// The smallest integer not below x, element-wise (torch.ceil).

#include <mase/ir/op/shape_rules.hpp>

namespace mase::op {

struct ceil {
  static constexpr std::string_view name = "ceil";
  using kind = mase::kind::builtin_func;
  static constexpr op_category category = op_category::elementwise;
  static constexpr arity inputs{1, 1};
  static constexpr auto attributes() { return attribute_list{}; }

  constexpr shape_result infer_shapes(std::span<const shape> in) const { return shape_rules::same_as_input(in); }
  constexpr bool operator==(const ceil&) const = default;
};

}  // namespace mase::op
