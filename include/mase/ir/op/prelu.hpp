#pragma once
// x for x > 0, weight * x otherwise, element-wise (torch.nn.PReLU). The learnable weight holds
// num_parameters slopes: one for every element, or one per channel along dim 1 of an input
// [N, C, *] (an input of rank below 2 has no channel dimension and takes one slope only).
// PyTorch initialises the slopes to 0.25 (its `init` argument, not an attribute of the op).
// MASE has no PReLU; it is a module here, like the batch norms, whose parameter it holds.

#include <mase/ir/op/op_base.hpp>

namespace mase::op {

struct prelu {
  std::int64_t num_parameters = 1;

  static constexpr std::string_view name = "prelu";
  using kind = mase::kind::module;
  static constexpr op_category category = op_category::elementwise;
  static constexpr arity inputs{1, 1};
  static constexpr auto attributes() { return attribute_list{attribute("num_parameters", &prelu::num_parameters)}; }

  constexpr parameter_list parameters() const { return {{"weight", {num_parameters}}}; }

  constexpr shape_result infer_shapes(std::span<const shape> in) const {
    if (num_parameters < 1) return shape_error("prelu: num_parameters must be positive");
    if (num_parameters > 1) {
      if (in[0].size() < 2)
        return shape_error("prelu: an input of rank below 2 has no channel dimension; use num_parameters = 1");
      if (in[0][1] != num_parameters)
        return shape_error("prelu: the input's channel dimension (dim 1) differs from num_parameters");
    }
    return shape_ok(in[0]);
  }
  constexpr bool operator==(const prelu&) const = default;
};

}  // namespace mase::op
