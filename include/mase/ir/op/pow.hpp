#pragma once
// x ** exponent, element-wise (operator.pow / torch.pow). With one input the exponent is the
// `exponent` attribute (torch.pow(Tensor, Scalar)). With two inputs the exponent is input 1,
// broadcast with input 0 as torch.pow(Tensor, Tensor) does, and the attribute is ignored.

#include <mase/ir/op/shape_rules.hpp>

namespace mase::op {

struct pow {
  double exponent = 1.0;

  static constexpr std::string_view name = "pow";
  using kind = mase::kind::builtin_func;
  static constexpr op_category category = op_category::elementwise;
  static constexpr arity inputs{1, 2};
  static constexpr auto attributes() { return attribute_list{attribute("exponent", &pow::exponent)}; }

  constexpr shape_result infer_shapes(std::span<const shape> in) const {
    if (in.size() == 1) return shape_rules::same_as_input(in);
    const shape_result r = shape_rules::broadcast_all(in);
    return r.ok() ? r : shape_error("pow: the shapes of the base and the exponent do not broadcast");
  }
  constexpr bool operator==(const pow&) const = default;
};

}  // namespace mase::op
