#pragma once
// torch.sum(x, dim, keepdim): the sum over the dimensions in `dim` (every dimension when `dim`
// is empty); keepdim keeps them as size 1. An empty reduction gives 0.

#include <mase/ir/op/shape_rules.hpp>

namespace mase::op {

struct sum {
  dims dim{};
  bool keepdim = false;

  static constexpr std::string_view name = "sum";
  using kind = mase::kind::builtin_func;
  static constexpr op_category category = op_category::reduction;
  static constexpr arity inputs{1, 1};
  static constexpr auto attributes() {
    return attribute_list{attribute("dim", &sum::dim), attribute("keepdim", &sum::keepdim)};
  }

  constexpr shape_result infer_shapes(std::span<const shape> in) const {
    return shape_rules::reduction(in[0], dim, keepdim,
                                  {.out_of_range = "sum: a dim is out of range for the input",
                                   .repeated = "sum: a dim appears more than once"});
  }
  constexpr bool operator==(const sum&) const = default;
};

}  // namespace mase::op
