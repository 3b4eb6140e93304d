#pragma once
// torch.split(x, split_size, dim): chunks of split_size along dim (the last one may be
// shorter). Its results are read with getitem.

#include <mase/ir/op/shape_rules.hpp>

namespace mase::op {

struct split {
  std::int64_t split_size = 1;
  std::int64_t dim = 0;

  static constexpr std::string_view name = "split";
  using kind = mase::kind::implicit_func;
  static constexpr op_category category = op_category::data_movement;
  static constexpr result_format_rule result_format = result_format_rule::same_as_input;
  static constexpr arity inputs{1, 1};
  static constexpr auto attributes() {
    return attribute_list{attribute("split_size", &split::split_size), attribute("dim", &split::dim)};
  }

  constexpr shape_result infer_shapes(std::span<const shape> in) const {
    const int d = shape_rules::normalize_dim(dim, in[0].size());
    if (d < 0) return shape_error("split: dim is out of range for the input");
    if (split_size <= 0) return shape_error("split: split_size must be positive");
    const std::int64_t length = in[0][d];
    if ((length + split_size - 1) / split_size > 16)
      return shape_error("split: more than 16 chunks");
    shape_list out;
    for (std::int64_t start = 0; start < length; start += split_size) {
      shape s = in[0];
      s[d] = start + split_size <= length ? split_size : length - start;
      out.push_back(s);
    }
    return shape_ok(out);
  }
  constexpr bool operator==(const split&) const = default;
};

}  // namespace mase::op
