#pragma once
// torch.transpose(x, dim0, dim1): swaps two dimensions.

#include <mase/ir/op/shape_rules.hpp>

namespace mase::op {

struct transpose {
  std::int64_t dim0 = 0;
  std::int64_t dim1 = 1;

  static constexpr std::string_view name = "transpose";
  using kind = mase::kind::implicit_func;
  static constexpr op_category category = op_category::data_movement;
  static constexpr result_format_rule result_format = result_format_rule::same_as_input;
  static constexpr arity inputs{1, 1};
  static constexpr auto attributes() {
    return attribute_list{attribute("dim0", &transpose::dim0), attribute("dim1", &transpose::dim1)};
  }

  constexpr shape_result infer_shapes(std::span<const shape> in) const {
    const int a = shape_rules::normalize_dim_scalar_ok(dim0, in[0].size());
    const int b = shape_rules::normalize_dim_scalar_ok(dim1, in[0].size());
    if (a < 0 || b < 0) return shape_error("transpose: dim0 or dim1 is out of range for the input");
    if (in[0].empty()) return shape_ok(in[0]);
    shape out = in[0];
    out[a] = in[0][b];
    out[b] = in[0][a];
    return shape_ok(out);
  }
  constexpr bool operator==(const transpose&) const = default;
};

}  // namespace mase::op
