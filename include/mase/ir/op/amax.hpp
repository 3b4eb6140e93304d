#pragma once
// torch.amax(x, dim, keepdim): the largest value over the dimensions in `dim` (every dimension
// when `dim` is empty); keepdim keeps them as size 1. NaN if any reduced value is NaN; reducing
// over no values is an error, as in PyTorch.

#include <mase/ir/op/shape_rules.hpp>

namespace mase::op {

struct amax {
  dims dim{};
  bool keepdim = false;

  static constexpr std::string_view name = "amax";
  using kind = mase::kind::builtin_func;
  static constexpr op_category category = op_category::reduction;
  static constexpr arity inputs{1, 1};
  static constexpr auto attributes() {
    return attribute_list{attribute("dim", &amax::dim), attribute("keepdim", &amax::keepdim)};
  }

  constexpr shape_result infer_shapes(std::span<const shape> in) const {
    constexpr shape_rules::reduction_errors why{.out_of_range = "amax: a dim is out of range for the input",
                                                .repeated = "amax: a dim appears more than once"};
    const shape_rules::reduced_dims r = shape_rules::reduction_mask(dim, in[0].size(), why);
    for (int i = 0; i < in[0].size(); ++i)
      if (r.error == nullptr && r.mask[static_cast<std::size_t>(i)] && in[0][i] == 0)
        return shape_error("amax: a reduced dimension has size 0, and the largest of no values is undefined");
    return shape_rules::reduction(in[0], dim, keepdim, why);
  }
  constexpr bool operator==(const amax&) const = default;
};

}  // namespace mase::op
