#pragma once
// Layer normalisation over the trailing dimensions normalized_shape (torch.nn.LayerNorm):
// y = (x - mean) / sqrt(var + eps) * weight + bias. weight has shape normalized_shape when
// elementwise_affine; bias too when elementwise_affine and bias (PyTorch ≥ 2.1's `bias`).

#include <mase/ir/op/shape_rules.hpp>

namespace mase::op {

struct layer_norm {
  dims normalized_shape{};
  double eps = 1e-5;
  bool elementwise_affine = true;
  bool bias = true;

  static constexpr std::string_view name = "layer_norm";
  using kind = mase::kind::module_related_func;
  static constexpr op_category category = op_category::normalization;
  static constexpr lowering_kind integer_rule = lowering_kind::normalization;
  // MASE quantizes data_in only; mase also takes formats for the affine weight and bias (the
  // bit-exact rule needs them), when a config gives them.
  static constexpr quantizable quantization{.weight = operand_use::optional, .bias = operand_use::optional};
  static constexpr hardware_mapping hardware{"mase_layer_norm"};
  static constexpr arity inputs{1, 1};
  static constexpr auto attributes() {
    return attribute_list{attribute("normalized_shape", &layer_norm::normalized_shape), attribute("eps", &layer_norm::eps),
                      attribute("elementwise_affine", &layer_norm::elementwise_affine),
                      attribute("bias", &layer_norm::bias)};
  }

  constexpr parameter_list parameters() const {
    parameter_list p;
    if (elementwise_affine) {
      p.push_back({"weight", normalized_shape});
      if (bias) p.push_back({"bias", normalized_shape});
    }
    return p;
  }

  constexpr shape_result infer_shapes(std::span<const shape> in) const {
    if (normalized_shape.empty()) return shape_error("layer_norm: normalized_shape needs at least one entry");
    for (std::int64_t d : normalized_shape)
      if (d < 1) return shape_error("layer_norm: normalized_shape's entries must be positive");
    if (!shape_rules::ends_with(in[0], normalized_shape))
      return shape_error("layer_norm: the input's trailing dimensions differ from normalized_shape");
    return shape_ok(in[0]);
  }
  // 5 operations per element (mean, subtract, variance, divide, scale), each way.
  constexpr op_work work(std::span<const shape> in, std::span<const shape>) const {
    return {5 * in[0].numel(), 5 * in[0].numel()};
  }
  constexpr bool operator==(const layer_norm&) const = default;
};

}  // namespace mase::op
