#pragma once
// The larger of a and b element-wise, with broadcasting (torch.maximum); NaN if either is NaN.

#include <mase/ir/op/shape_rules.hpp>

namespace mase::op {

struct maximum {
  static constexpr std::string_view name = "maximum";
  using kind = mase::kind::builtin_func;
  static constexpr op_category category = op_category::elementwise;
  static constexpr arity inputs{2, 2};
  static constexpr auto attributes() { return attribute_list{}; }

  constexpr shape_result infer_shapes(std::span<const shape> in) const {
    const shape_result r = shape_rules::broadcast_all(in);
    return r.ok() ? r : shape_error("maximum: the input shapes do not broadcast");
  }
  constexpr bool operator==(const maximum&) const = default;
};

}  // namespace mase::op
