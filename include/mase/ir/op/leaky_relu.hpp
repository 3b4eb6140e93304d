#pragma once
// x for x >= 0, negative_slope * x below, element-wise (torch.nn.LeakyReLU).

#include <mase/ir/op/shape_rules.hpp>

namespace mase::op {

struct leaky_relu {
  double negative_slope = 0.01;
  bool inplace = false;

  static constexpr std::string_view name = "leaky_relu";
  using kind = mase::kind::module_related_func;
  static constexpr op_category category = op_category::elementwise;
  static constexpr quantizable quantization{};
  static constexpr hardware_mapping hardware{"mase_lut"};
  static constexpr arity inputs{1, 1};
  static constexpr auto attributes() {
    return attribute_list{attribute("negative_slope", &leaky_relu::negative_slope),
                      attribute("inplace", &leaky_relu::inplace)};
  }

  constexpr shape_result infer_shapes(std::span<const shape> in) const { return shape_rules::same_as_input(in); }
  constexpr bool operator==(const leaky_relu&) const = default;
};

}  // namespace mase::op
