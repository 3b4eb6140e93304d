#pragma once
// x * Phi(x), element-wise (torch.nn.GELU), Phi the standard normal CDF computed with erf;
// approximate_tanh is PyTorch's approximate="tanh": 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).

#include <mase/ir/op/shape_rules.hpp>

namespace mase::op {

struct gelu {
  bool approximate_tanh = false;

  static constexpr std::string_view name = "gelu";
  using kind = mase::kind::module_related_func;
  static constexpr op_category category = op_category::elementwise;
  static constexpr quantizable quantization{};
  static constexpr hardware_mapping hardware{"mase_lut"};
  static constexpr arity inputs{1, 1};
  static constexpr auto attributes() { return attribute_list{attribute("approximate_tanh", &gelu::approximate_tanh)}; }

  constexpr shape_result infer_shapes(std::span<const shape> in) const { return shape_rules::same_as_input(in); }
  constexpr bool operator==(const gelu&) const = default;
};

}  // namespace mase::op
