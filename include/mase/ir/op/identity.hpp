#pragma once
// The input unchanged (torch.nn.Identity).

#include <mase/ir/op/shape_rules.hpp>

namespace mase::op {

struct identity {
  static constexpr std::string_view name = "identity";
  using kind = mase::kind::module_related_func;
  static constexpr op_category category = op_category::view;
  static constexpr result_format_rule result_format = result_format_rule::same_as_input;
  static constexpr hardware_mapping hardware = wired_through;
  static constexpr arity inputs{1, 1};
  static constexpr auto attributes() { return attribute_list{}; }

  constexpr shape_result infer_shapes(std::span<const shape> in) const { return shape_rules::same_as_input(in); }
  constexpr bool operator==(const identity&) const = default;
};

}  // namespace mase::op
