#pragma once
// |x|, element-wise (torch.abs). MASE lists abs among its implicit functions, so it is an
// implicit_func here too, although it computes.

#include <mase/ir/op/shape_rules.hpp>

namespace mase::op {

struct abs {
  static constexpr std::string_view name = "abs";
  using kind = mase::kind::implicit_func;
  static constexpr op_category category = op_category::elementwise;
  static constexpr arity inputs{1, 1};
  static constexpr auto attributes() { return attribute_list{}; }

  constexpr shape_result infer_shapes(std::span<const shape> in) const { return shape_rules::same_as_input(in); }
  constexpr bool operator==(const abs&) const = default;
};

}  // namespace mase::op
