#pragma once
// x for x > 0, alpha * (exp(x) - 1) otherwise, element-wise (torch.nn.ELU).

#include <mase/ir/op/shape_rules.hpp>

namespace mase::op {

struct elu {
  double alpha = 1.0;
  bool inplace = false;

  static constexpr std::string_view name = "elu";
  using kind = mase::kind::module_related_func;
  static constexpr op_category category = op_category::elementwise;
  static constexpr quantizable quantization{};
  static constexpr hardware_mapping hardware{"mase_lut"};
  static constexpr arity inputs{1, 1};
  static constexpr auto attributes() {
    return attribute_list{attribute("alpha", &elu::alpha),
                      attribute("inplace", &elu::inplace)};
  }

  constexpr shape_result infer_shapes(std::span<const shape> in) const { return shape_rules::same_as_input(in); }
  constexpr bool operator==(const elu&) const = default;
};

}  // namespace mase::op
