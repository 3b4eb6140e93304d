#pragma once
// x * relu6(x + 3) / 6, element-wise (torch.nn.Hardswish).

#include <mase/ir/op/shape_rules.hpp>

namespace mase::op {

struct hardswish {
  bool inplace = false;

  static constexpr std::string_view name = "hardswish";
  using kind = mase::kind::module_related_func;
  static constexpr op_category category = op_category::elementwise;
  static constexpr quantizable quantization{};
  static constexpr hardware_mapping hardware{"mase_lut"};
  static constexpr arity inputs{1, 1};
  static constexpr auto attributes() { return attribute_list{attribute("inplace", &hardswish::inplace)}; }

  constexpr shape_result infer_shapes(std::span<const shape> in) const { return shape_rules::same_as_input(in); }
  constexpr bool operator==(const hardswish&) const = default;
};

}  // namespace mase::op
