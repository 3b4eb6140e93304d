#pragma once
// torch.matmul: a 1-D operand is a vector (a row on the left, a column on the right, its
// dimension dropped from the result); dimensions before the last two are batch dimensions and
// broadcast. [2,1,3,4] × [5,4,6] → [2,5,3,6]; [4] × [4] → [] (a dot product).

#include <mase/ir/op/shape_rules.hpp>

namespace mase::op {

struct matmul {
  static constexpr std::string_view name = "matmul";
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
    if (a.empty() || b.empty()) return shape_error("matmul: both inputs need at least one dimension");
    const std::int64_t b_inner = b.size() == 1 ? b[0] : b[b.size() - 2];
    if (a.back() != b_inner) return shape_error("matmul: the inner dimensions differ (a's last, b's second to last)");
    using shape_rules::leading_dims;
    const shape_result batch = shape_rules::broadcast(leading_dims(a, 2), leading_dims(b, 2));
    if (!batch.ok()) return shape_error("matmul: the batch dimensions do not broadcast");
    shape out = batch.shapes[0];
    if (a.size() >= 2) out.push_back(a[a.size() - 2]);
    if (b.size() >= 2) out.push_back(b.back());
    return shape_ok(out);
  }
  // One multiply-accumulate per result element and term; the gradient takes twice that.
  constexpr op_work work(std::span<const shape> in, std::span<const shape> out) const {
    const std::int64_t forward = out[0].numel() * in[0].back();
    return {forward, 2 * forward};
  }
  constexpr bool operator==(const matmul&) const = default;
};

}  // namespace mase::op
