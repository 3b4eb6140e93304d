#pragma once
// scale * (max(0, x) + min(0, alpha * (exp(x) - 1))), element-wise (torch.nn.SELU), with
// PyTorch's fixed alpha = 1.6732632423543772 and scale = 1.0507009873554805.

#include <mase/ir/op/shape_rules.hpp>

namespace mase::op {

struct selu {
  bool inplace = false;

  static constexpr std::string_view name = "selu";
  using kind = mase::kind::module_related_func;
  static constexpr op_category category = op_category::elementwise;
  static constexpr quantizable quantization{};
  static constexpr hardware_mapping hardware{"mase_lut"};
  static constexpr arity inputs{1, 1};
  static constexpr auto attributes() { return attribute_list{attribute("inplace", &selu::inplace)}; }

  constexpr shape_result infer_shapes(std::span<const shape> in) const { return shape_rules::same_as_input(in); }
  constexpr bool operator==(const selu&) const = default;
};

}  // namespace mase::op
