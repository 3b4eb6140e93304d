#pragma once
// A stored tensor read by the graph (fx's get_attr; MASE's mase_op "constant"). The tensor is the
// node's parameter "value".

#include <mase/ir/op/op_base.hpp>

namespace mase::op {

struct constant {
  dims shape{};

  static constexpr std::string_view name = "constant";
  using kind = mase::kind::get_attr;
  static constexpr op_category category = op_category::interface;
  static constexpr arity inputs{0, 0};
  static constexpr auto attributes() { return attribute_list{attribute("shape", &constant::shape)}; }

  constexpr parameter_list parameters() const { return {{"value", shape}}; }
  constexpr shape_result infer_shapes(std::span<const mase::shape>) const { return shape_ok(shape); }
  constexpr bool operator==(const constant&) const = default;
};

}  // namespace mase::op
