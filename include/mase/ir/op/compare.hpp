#pragma once
// Element-wise comparisons of two tensors broadcast together (torch.eq, lt, le, gt, ge; ONNX's
// Equal, Less, LessOrEqual, Greater, GreaterOrEqual), one op template for the five. mase's
// tensors hold float32, so the result is 1 where the comparison holds and 0 elsewhere (torch's
// bool result as float); NaN compares false, as IEEE and torch have it.

#include <mase/ir/op/shape_rules.hpp>

namespace mase::op {

enum class comparison : std::uint8_t { eq, lt, le, gt, ge };

template <comparison C>
struct compare {
  static constexpr std::string_view name = C == comparison::eq   ? "eq"
                                           : C == comparison::lt ? "lt"
                                           : C == comparison::le ? "le"
                                           : C == comparison::gt ? "gt"
                                                                 : "ge";
  using kind = mase::kind::builtin_func;
  static constexpr op_category category = op_category::elementwise;
  static constexpr arity inputs{2, 2};
  static constexpr auto attributes() { return attribute_list{}; }

  // Whether the comparison holds for one pair of elements.
  template <class T>
  static constexpr bool holds(T a, T b) noexcept {
    switch (C) {
      case comparison::eq: return a == b;
      case comparison::lt: return a < b;
      case comparison::le: return a <= b;
      case comparison::gt: return a > b;
      case comparison::ge: return a >= b;
    }
    return false;
  }

  // One element's result, 1 or 0 (op_with_binary_rule): the float kernel is made from it.
  static constexpr float apply(float a, float b) noexcept { return holds(a, b) ? 1.0f : 0.0f; }

  constexpr shape_result infer_shapes(std::span<const shape> in) const {
    const shape_result r = shape_rules::broadcast_all(in);
    return r.ok() ? r : shape_error("comparison: the input shapes do not broadcast");
  }
  constexpr bool operator==(const compare&) const = default;
};

using eq = compare<comparison::eq>;
using lt = compare<comparison::lt>;
using le = compare<comparison::le>;
using gt = compare<comparison::gt>;
using ge = compare<comparison::ge>;

}  // namespace mase::op
