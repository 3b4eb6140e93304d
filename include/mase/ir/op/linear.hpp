#pragma once
// y = x Wᵀ + b over the last dimension (torch.nn.Linear). weight [out_features, in_features],
// bias [out_features].

#include <mase/ir/op/shape_rules.hpp>

namespace mase::op {

struct linear {
  std::int64_t in_features = 0;
  std::int64_t out_features = 0;
  bool bias = true;

  static constexpr std::string_view name = "linear";
  using kind = mase::kind::module_related_func;
  static constexpr op_category category = op_category::dot_product;
  static constexpr lowering_kind integer_rule = lowering_kind::dot_product;
  static constexpr result_format_rule result_format = result_format_rule::weighted_sum;
  static constexpr quantizable quantization{.weight = operand_use::required, .bias = operand_use::required_with_parameter};
  static constexpr hardware_mapping hardware{"mase_linear"};
  static constexpr arity inputs{1, 1};
  static constexpr auto attributes() {
    return attribute_list{attribute("in_features", &linear::in_features), attribute("out_features", &linear::out_features),
                      attribute("bias", &linear::bias)};
  }

  constexpr parameter_list parameters() const {
    parameter_list p{{"weight", {out_features, in_features}}};
    if (bias) p.push_back({"bias", {out_features}});
    return p;
  }

  constexpr shape_result infer_shapes(std::span<const shape> in) const {
    if (in[0].empty()) return shape_error("linear: the input needs at least one dimension");
    if (in[0].back() != in_features) return shape_error("linear: the input's last dimension differs from in_features");
    shape out = in[0];
    out[out.size() - 1] = out_features;
    return shape_ok(out);
  }
  // out·in multiply-accumulates per row; the gradient takes twice that (input and weight).
  constexpr op_work work(std::span<const shape> in, std::span<const shape>) const {
    const std::int64_t forward = out_features * in_features * shape_rules::feature_rows(in[0]);
    return {forward, 2 * forward};
  }
  constexpr bool operator==(const linear&) const = default;
};

}  // namespace mase::op
