#pragma once
// √x, element-wise (torch.sqrt).

#include <mase/ir/op/shape_rules.hpp>

namespace mase::op {

struct sqrt {
  static constexpr std::string_view name = "sqrt";
  using kind = mase::kind::builtin_func;
  static constexpr op_category category = op_category::elementwise;
  static constexpr arity inputs{1, 1};
  static constexpr auto attributes() { return attribute_list{}; }

  constexpr shape_result infer_shapes(std::span<const shape> in) const { return shape_rules::same_as_input(in); }
  constexpr bool operator==(const sqrt&) const = default;
};

}  // namespace mase::op
