#pragma once
// a / b, element-wise with broadcasting (operator.truediv / torch.div; true division).

#include <mase/ir/op/shape_rules.hpp>

namespace mase::op {

struct div {
  static constexpr std::string_view name = "div";
  using kind = mase::kind::builtin_func;
  static constexpr op_category category = op_category::elementwise;
  static constexpr arity inputs{2, 2};
  // Only by a constant power of two, which moves the point and keeps the codes
  // (pass/quantize.hpp's exact_scale_format): the component is wires.
  static constexpr hardware_mapping hardware{"mase_rescale", 1};
  static constexpr auto attributes() { return attribute_list{}; }

  constexpr shape_result infer_shapes(std::span<const shape> in) const {
    const shape_result r = shape_rules::broadcast_all(in);
    return r.ok() ? r : shape_error("div: the input shapes do not broadcast");
  }
  constexpr bool operator==(const div&) const = default;
};

}  // namespace mase::op
