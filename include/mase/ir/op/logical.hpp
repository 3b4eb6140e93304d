#pragma once
// Element-wise logic on truth values (torch.logical_not, logical_and, logical_or, logical_xor;
// ONNX's Not, And, Or, Xor), one op template for the four; the binary ones broadcast. A nonzero
// element, NaN included, is true (torch's rule, and where's); the result is 1 or 0 as float32.

#include <mase/ir/op/shape_rules.hpp>

namespace mase::op {

enum class logic : std::uint8_t { not_, and_, or_, xor_ };

template <logic L>
struct logical {
  static constexpr std::string_view name = L == logic::not_   ? "logical_not"
                                           : L == logic::and_ ? "logical_and"
                                           : L == logic::or_  ? "logical_or"
                                                              : "logical_xor";
  using kind = mase::kind::builtin_func;
  static constexpr op_category category = op_category::elementwise;
  static constexpr int operands = L == logic::not_ ? 1 : 2;
  static constexpr arity inputs{operands, operands};
  static constexpr auto attributes() { return attribute_list{}; }

  // The result for one element (b is ignored by not).
  template <class T>
  static constexpr bool holds(T a, T b) noexcept {
    const bool p = a != T{0}, q = b != T{0};  // NaN != 0
    switch (L) {
      case logic::not_: return !p;
      case logic::and_: return p && q;
      case logic::or_: return p || q;
      case logic::xor_: return p != q;
    }
    return false;
  }

  // One element's result, 1 or 0 (op_with_unary_rule / op_with_binary_rule): the float kernel
  // is made from it.
  static constexpr float apply(float a) noexcept
    requires(operands == 1)
  {
    return holds(a, 0.0f) ? 1.0f : 0.0f;
  }
  static constexpr float apply(float a, float b) noexcept
    requires(operands == 2)
  {
    return holds(a, b) ? 1.0f : 0.0f;
  }

  constexpr shape_result infer_shapes(std::span<const shape> in) const {
    if constexpr (operands == 1) {
      return shape_rules::same_as_input(in);
    } else {
      const shape_result r = shape_rules::broadcast_all(in);
      return r.ok() ? r : shape_error("logical: the input shapes do not broadcast");
    }
  }
  constexpr bool operator==(const logical&) const = default;
};

using logical_not = logical<logic::not_>;
using logical_and = logical<logic::and_>;
using logical_or = logical<logic::or_>;
using logical_xor = logical<logic::xor_>;

}  // namespace mase::op
