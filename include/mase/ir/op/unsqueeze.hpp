#pragma once
// torch.unsqueeze(x, dim): inserts a size-1 dimension so that it becomes dimension `dim` of the
// result; dim lies in [-rank-1, rank] (negative counts from the end of the result).

#include <mase/ir/op/shape_rules.hpp>

namespace mase::op {

struct unsqueeze {
  std::int64_t dim = 0;

  static constexpr std::string_view name = "unsqueeze";
  using kind = mase::kind::implicit_func;
  static constexpr op_category category = op_category::view;
  static constexpr hardware_mapping hardware = wired_through;
  static constexpr result_format_rule result_format = result_format_rule::same_as_input;
  static constexpr arity inputs{1, 1};
  static constexpr auto attributes() { return attribute_list{attribute("dim", &unsqueeze::dim)}; }

  constexpr shape_result infer_shapes(std::span<const shape> in) const {
    const shape& x = in[0];
    const int at = shape_rules::normalize_dim(dim, x.size() + 1);
    if (at < 0) return shape_error("unsqueeze: dim is out of range (it must lie in [-rank-1, rank])");
    if (x.size() == shape::max_rank) return shape_error("unsqueeze: the result would have more than 8 dimensions");
    shape out;
    for (int i = 0; i < x.size(); ++i) {
      if (i == at) out.push_back(1);
      out.push_back(x[i]);
    }
    if (at == x.size()) out.push_back(1);
    return shape_ok(out);
  }
  constexpr bool operator==(const unsqueeze&) const = default;
};

}  // namespace mase::op
