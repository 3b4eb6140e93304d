#pragma once
// Root-mean-square normalisation over the trailing dimensions normalized_shape (torch.nn.RMSNorm):
// y = x / sqrt(mean(x²) + eps) * weight, weight of shape normalized_shape when elementwise_affine.
// PyTorch's default eps=None means the machine epsilon of the input's dtype; the default here is
// float32's, 2⁻²³ (what PyTorch uses for a float32 model). A model in another dtype stores its own.

#include <mase/ir/op/shape_rules.hpp>

#include <limits>

namespace mase::op {

struct rms_norm {
  dims normalized_shape{};
  double eps = std::numeric_limits<float>::epsilon();
  bool elementwise_affine = true;

  static constexpr std::string_view name = "rms_norm";
  using kind = mase::kind::module_related_func;
  static constexpr op_category category = op_category::normalization;
  static constexpr lowering_kind integer_rule = lowering_kind::normalization;
  // As layer_norm: data_in, and the affine weight when a config gives its format.
  static constexpr quantizable quantization{.weight = operand_use::optional};
  static constexpr hardware_mapping hardware{"mase_layer_norm"};  // with CENTRED = 0
  static constexpr arity inputs{1, 1};
  static constexpr auto attributes() {
    return attribute_list{attribute("normalized_shape", &rms_norm::normalized_shape), attribute("eps", &rms_norm::eps),
                      attribute("elementwise_affine", &rms_norm::elementwise_affine)};
  }

  constexpr parameter_list parameters() const {
    if (elementwise_affine) return {{"weight", normalized_shape}};
    return {};
  }

  constexpr shape_result infer_shapes(std::span<const shape> in) const {
    if (normalized_shape.empty()) return shape_error("rms_norm: normalized_shape needs at least one entry");
    for (std::int64_t d : normalized_shape)
      if (d < 1) return shape_error("rms_norm: normalized_shape's entries must be positive");
    if (!shape_rules::ends_with(in[0], normalized_shape))
      return shape_error("rms_norm: the input's trailing dimensions differ from normalized_shape");
    return shape_ok(in[0]);
  }
  // 4 operations per element (square, sum, divide, scale), each way.
  constexpr op_work work(std::span<const shape> in, std::span<const shape>) const {
    return {4 * in[0].numel(), 4 * in[0].numel()};
  }
  constexpr bool operator==(const rms_norm&) const = default;
};

}  // namespace mase::op
