#pragma once
// x clamped to [min_val, max_val], element-wise (torch.nn.Hardtanh).

#include <mase/ir/op/shape_rules.hpp>

namespace mase::op {

struct hardtanh {
  double min_val = -1.0;
  double max_val = 1.0;
  bool inplace = false;

  static constexpr std::string_view name = "hardtanh";
  using kind = mase::kind::module_related_func;
  static constexpr op_category category = op_category::elementwise;
  static constexpr quantizable quantization{};
  static constexpr hardware_mapping hardware{"mase_lut"};
  static constexpr arity inputs{1, 1};
  static constexpr auto attributes() {
    return attribute_list{attribute("min_val", &hardtanh::min_val),
                      attribute("max_val", &hardtanh::max_val),
                      attribute("inplace", &hardtanh::inplace)};
  }

  constexpr shape_result infer_shapes(std::span<const shape> in) const {
    if (!(min_val <= max_val)) return shape_error("hardtanh: min_val must not exceed max_val");
    return shape_rules::same_as_input(in);
  }
  constexpr bool operator==(const hardtanh&) const = default;
};

}  // namespace mase::op
