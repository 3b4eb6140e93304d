#pragma once
// torch.where(condition, x, y): x where the condition holds, else y, the three inputs broadcast
// together. The condition is a float tensor (mase's tensors are float32): nonzero, NaN
// included, is true. MASE lists where among its implicit functions (a selection, no arithmetic).

#include <mase/ir/op/shape_rules.hpp>

namespace mase::op {

struct where {
  static constexpr std::string_view name = "where";
  using kind = mase::kind::implicit_func;
  static constexpr op_category category = op_category::elementwise;
  static constexpr arity inputs{3, 3};
  static constexpr auto attributes() { return attribute_list{}; }

  constexpr shape_result infer_shapes(std::span<const shape> in) const {
    const shape_result r = shape_rules::broadcast_all(in);
    return r.ok() ? r : shape_error("where: the condition and the two inputs do not broadcast together");
  }
  constexpr bool operator==(const where&) const = default;
};

}  // namespace mase::op
