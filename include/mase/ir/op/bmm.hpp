#pragma once
// torch.bmm: [b, n, m] × [b, m, p] → [b, n, p]; no broadcasting.

#include <mase/ir/op/op_base.hpp>

namespace mase::op {

struct bmm {
  static constexpr std::string_view name = "bmm";
  using kind = mase::kind::builtin_func;
  static constexpr arity inputs{2, 2};
  static constexpr auto attributes() { return std::tuple{}; }

  constexpr shape_result infer_shapes(std::span<const shape> in) const {
    const shape& a = in[0];
    const shape& b = in[1];
    if (a.size() != 3 || b.size() != 3) return shape_error("bmm: both inputs must have exactly three dimensions");
    if (a[0] != b[0]) return shape_error("bmm: the batch sizes (first dimensions) differ");
    if (a[2] != b[1]) return shape_error("bmm: the inner dimensions differ (a's last, b's second)");
    return shape_ok(shape{a[0], a[1], b[2]});
  }
  constexpr bool operator==(const bmm&) const = default;
};

}  // namespace mase::op
