#pragma once
// Merges dimensions start_dim..end_dim into one (torch.flatten; the defaults are nn.Flatten's,
// which keeps the batch dimension): [2, 3, 4, 5] → [2, 60]. A rank-0 input becomes [1].

#include <mase/ir/op/shape_rules.hpp>

namespace mase::op {

struct flatten {
  std::int64_t start_dim = 1;
  std::int64_t end_dim = -1;

  static constexpr std::string_view name = "flatten";
  using kind = mase::kind::implicit_func;
  static constexpr op_category category = op_category::view;
  static constexpr result_format_rule result_format = result_format_rule::same_as_input;
  static constexpr hardware_mapping hardware = wired_through;
  static constexpr arity inputs{1, 1};
  static constexpr auto attributes() {
    return attribute_list{attribute("start_dim", &flatten::start_dim), attribute("end_dim", &flatten::end_dim)};
  }

  constexpr shape_result infer_shapes(std::span<const shape> in) const {
    const shape& x = in[0];
    const int start = shape_rules::normalize_dim_scalar_ok(start_dim, x.size());
    const int end = shape_rules::normalize_dim_scalar_ok(end_dim, x.size());
    if (start < 0 || end < 0) return shape_error("flatten: start_dim or end_dim is out of range for the input");
    if (start > end) return shape_error("flatten: start_dim comes after end_dim");
    if (x.empty()) return shape_ok(shape{1});
    shape out;
    for (int i = 0; i < start; ++i) out.push_back(x[i]);
    std::int64_t merged = 1;
    for (int i = start; i <= end; ++i)
      if (!shape_rules::multiply_checked(merged, x[i], merged))
        return shape_error("flatten: the merged dimension overflows 64 bits");
    out.push_back(merged);
    for (int i = end + 1; i < x.size(); ++i) out.push_back(x[i]);
    return shape_ok(out);
  }
  constexpr bool operator==(const flatten&) const = default;
};

}  // namespace mase::op
