#pragma once
// x ** exponent, element-wise (operator.pow / torch.pow with a scalar exponent; a tensor
// exponent is not modelled).

#include <mase/ir/op/shape_rules.hpp>

namespace mase::op {

struct pow {
  double exponent = 1.0;

  static constexpr std::string_view name = "pow";
  using kind = mase::kind::builtin_func;
  static constexpr arity inputs{1, 1};
  static constexpr auto attributes() { return std::tuple{attribute("exponent", &pow::exponent)}; }

  constexpr shape_result infer_shapes(std::span<const shape> in) const { return shape_rules::same_as_input(in); }
  constexpr bool operator==(const pow&) const = default;
};

}  // namespace mase::op
