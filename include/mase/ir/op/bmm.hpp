#pragma once
// torch.bmm: [b, n, m] × [b, m, p] → [b, n, p]; no broadcasting.

#include <mase/ir/op/op_base.hpp>

namespace mase::op {

struct bmm {
  static constexpr std::string_view name = "bmm";
  using kind = mase::kind::builtin_func;
  static constexpr op_category category = op_category::dot_product;
  static constexpr lowering_kind integer_rule = lowering_kind::matmul;
  static constexpr result_format_rule result_format = result_format_rule::matrix_product;
  static constexpr quantizable quantization{.weight = operand_use::required, .weight_is_data_in_1 = true};
  static constexpr hardware_mapping hardware{"mase_matmul"};
  static constexpr arity inputs{2, 2};
  static constexpr auto attributes() { return attribute_list{}; }

  constexpr shape_result infer_shapes(std::span<const shape> in) const {
    const shape& a = in[0];
    const shape& b = in[1];
    if (a.size() != 3 || b.size() != 3) return shape_error("bmm: both inputs must have exactly three dimensions");
    if (a[0] != b[0]) return shape_error("bmm: the batch sizes (first dimensions) differ");
    if (a[2] != b[1]) return shape_error("bmm: the inner dimensions differ (a's last, b's second)");
    return shape_ok(shape{a[0], a[1], b[2]});
  }
  // One multiply-accumulate per result element and term; the gradient takes twice that.
  constexpr op_work work(std::span<const shape> in, std::span<const shape> out) const {
    const std::int64_t forward = out[0].numel() * in[0].back();
    return {forward, 2 * forward};
  }
  constexpr bool operator==(const bmm&) const = default;
};

}  // namespace mase::op
