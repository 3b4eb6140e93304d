#pragma once
// exp(x) / sum(exp(x)) along dim (torch.nn.Softmax). PyTorch's dim=None picks a dimension by a
// legacy rule and warns; here dim is explicit, the last one by default.

#include <mase/ir/op/shape_rules.hpp>

namespace mase::op {

struct softmax {
  std::int64_t dim = -1;

  static constexpr std::string_view name = "softmax";
  using kind = mase::kind::module_related_func;
  static constexpr op_category category = op_category::reduction;
  static constexpr lowering_kind integer_rule = lowering_kind::softmax;
  // Not in MASE's QUANTIZEABLE_OP; quantizable here (data_in, data_out) for its integer rule.
  static constexpr quantizable quantization{};
  static constexpr hardware_mapping hardware{"mase_softmax"};  // over the last dimension
  static constexpr arity inputs{1, 1};
  static constexpr auto attributes() { return attribute_list{attribute("dim", &softmax::dim)}; }

  constexpr shape_result infer_shapes(std::span<const shape> in) const {
    if (shape_rules::normalize_dim_scalar_ok(dim, in[0].size()) < 0)
      return shape_error("softmax: dim is out of range for the input");
    return shape_rules::same_as_input(in);
  }
  // 3 operations per element (exponent, sum, divide), each way.
  constexpr op_work work(std::span<const shape> in, std::span<const shape>) const {
    return {3 * in[0].numel(), 3 * in[0].numel()};
  }
  constexpr bool operator==(const softmax&) const = default;
};

}  // namespace mase::op
