#pragma once
// -1, 0 or 1 by the sign of x, element-wise (torch.sign). As PyTorch computes it,
// (0 < x) - (x < 0): both zeros give +0 and NaN gives 0.

#include <mase/ir/op/shape_rules.hpp>

namespace mase::op {

struct sign {
  static constexpr std::string_view name = "sign";
  using kind = mase::kind::builtin_func;
  static constexpr op_category category = op_category::elementwise;
  static constexpr arity inputs{1, 1};
  static constexpr auto attributes() { return attribute_list{}; }

  constexpr shape_result infer_shapes(std::span<const shape> in) const { return shape_rules::same_as_input(in); }
  constexpr bool operator==(const sign&) const = default;
};

}  // namespace mase::op
