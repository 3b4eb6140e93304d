#pragma once
// max(x, 0), element-wise (torch.nn.ReLU).

#include <mase/ir/op/shape_rules.hpp>

namespace mase::op {

struct relu {
  bool inplace = false;

  static constexpr std::string_view name = "relu";
  using kind = mase::kind::module_related_func;
  static constexpr op_category category = op_category::elementwise;
  static constexpr lowering_kind integer_rule = lowering_kind::relu;
  static constexpr result_format_rule result_format = result_format_rule::same_as_input;
  static constexpr quantizable quantization{};
  static constexpr hardware_mapping hardware{"mase_relu"};
  static constexpr arity inputs{1, 1};
  static constexpr auto attributes() { return attribute_list{attribute("inplace", &relu::inplace)}; }

  constexpr shape_result infer_shapes(std::span<const shape> in) const { return shape_rules::same_as_input(in); }
  constexpr bool operator==(const relu&) const = default;
};

}  // namespace mase::op
