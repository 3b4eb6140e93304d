#pragma once
// torch.permute / Tensor.permute: result dimension i is input dimension dims[i]; dims must name
// every input dimension exactly once (negative entries count from the end).

#include <mase/ir/op/shape_rules.hpp>

namespace mase::op {

struct permute {
  mase::dims dims{};

  static constexpr std::string_view name = "permute";
  using kind = mase::kind::implicit_func;
  static constexpr op_category category = op_category::data_movement;
  static constexpr result_format_rule result_format = result_format_rule::same_as_input;
  // A stream reordered per sample (the batch dimension must stay first).
  static constexpr hardware_mapping hardware{"mase_permute"};
  static constexpr arity inputs{1, 1};
  static constexpr auto attributes() { return attribute_list{attribute("dims", &permute::dims)}; }

  constexpr shape_result infer_shapes(std::span<const shape> in) const {
    const shape& x = in[0];
    if (dims.size() != x.size()) return shape_error("permute: dims must have one entry per input dimension");
    std::array<bool, shape::max_rank> used{};
    shape out;
    for (std::int64_t d : dims) {
      const int n = shape_rules::normalize_dim(d, x.size());
      if (n < 0) return shape_error("permute: a dim is out of range for the input");
      if (used[static_cast<std::size_t>(n)]) return shape_error("permute: a dim appears more than once");
      used[static_cast<std::size_t>(n)] = true;
      out.push_back(x[n]);
    }
    return shape_ok(out);
  }
  constexpr bool operator==(const permute&) const = default;
};

}  // namespace mase::op
