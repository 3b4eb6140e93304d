#pragma once
// x * sigmoid(x), element-wise (torch.nn.SiLU, also called swish).

#include <mase/ir/op/shape_rules.hpp>

namespace mase::op {

struct silu {
  bool inplace = false;

  static constexpr std::string_view name = "silu";
  using kind = mase::kind::module_related_func;
  static constexpr op_category category = op_category::elementwise;
  static constexpr quantizable quantization{};
  static constexpr hardware_mapping hardware{"mase_lut"};
  static constexpr arity inputs{1, 1};
  static constexpr auto attributes() { return attribute_list{attribute("inplace", &silu::inplace)}; }

  constexpr shape_result infer_shapes(std::span<const shape> in) const { return shape_rules::same_as_input(in); }
  constexpr bool operator==(const silu&) const = default;
};

}  // namespace mase::op
