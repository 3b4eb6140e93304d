#pragma once
// log(1 + exp(beta * x)) / beta, element-wise (torch.nn.Softplus); x itself where
// beta * x > threshold, as PyTorch does for numerical stability.

#include <mase/ir/op/shape_rules.hpp>

namespace mase::op {

struct softplus {
  double beta = 1.0;
  double threshold = 20.0;

  static constexpr std::string_view name = "softplus";
  using kind = mase::kind::module_related_func;
  static constexpr op_category category = op_category::elementwise;
  static constexpr quantizable quantization{};
  static constexpr hardware_mapping hardware{"mase_lut"};
  static constexpr arity inputs{1, 1};
  static constexpr auto attributes() {
    return attribute_list{attribute("beta", &softplus::beta),
                      attribute("threshold", &softplus::threshold)};
  }

  constexpr shape_result infer_shapes(std::span<const shape> in) const {
    if (beta == 0.0) return shape_error("softplus: beta must be non-zero (the result divides by it)");
    return shape_rules::same_as_input(in);
  }
  constexpr bool operator==(const softplus&) const = default;
};

}  // namespace mase::op
