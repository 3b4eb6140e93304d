#pragma once
// 1 / (1 + exp(-x)), element-wise (torch.nn.Sigmoid).

#include <mase/ir/op/shape_rules.hpp>

namespace mase::op {

struct sigmoid {
  static constexpr std::string_view name = "sigmoid";
  using kind = mase::kind::module_related_func;
  static constexpr op_category category = op_category::elementwise;
  static constexpr quantizable quantization{};
  static constexpr hardware_mapping hardware{"mase_lut"};
  static constexpr arity inputs{1, 1};
  static constexpr auto attributes() { return attribute_list{}; }

  constexpr shape_result infer_shapes(std::span<const shape> in) const { return shape_rules::same_as_input(in); }
  constexpr bool operator==(const sigmoid&) const = default;
};

}  // namespace mase::op
