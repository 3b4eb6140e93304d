#pragma once
// A graph input of a fixed shape (fx's placeholder).

#include <mase/ir/op/op_base.hpp>

namespace mase::op {

struct placeholder {
  dims shape{};

  static constexpr std::string_view name = "placeholder";
  using kind = mase::kind::placeholder;
  static constexpr op_category category = op_category::interface;
  static constexpr arity inputs{0, 0};
  static constexpr auto attributes() { return attribute_list{attribute("shape", &placeholder::shape)}; }

  constexpr shape_result infer_shapes(std::span<const mase::shape>) const { return shape_ok(shape); }
  constexpr bool operator==(const placeholder&) const = default;
};

}  // namespace mase::op
