#pragma once
// tanh(x), element-wise (torch.nn.Tanh).

#include <mase/ir/op/shape_rules.hpp>

namespace mase::op {

struct tanh {
  static constexpr std::string_view name = "tanh";
  using kind = mase::kind::module_related_func;
  static constexpr op_category category = op_category::elementwise;
  static constexpr quantizable quantization{};
  static constexpr hardware_mapping hardware{"mase_lut"};
  static constexpr arity inputs{1, 1};
  static constexpr auto attributes() { return attribute_list{}; }

  constexpr shape_result infer_shapes(std::span<const shape> in) const { return shape_rules::same_as_input(in); }
  constexpr bool operator==(const tanh&) const = default;
};

}  // namespace mase::op
