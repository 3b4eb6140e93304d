#pragma once
// Instance normalisation (torch.nn.InstanceNorm1d/2d/3d without running statistics, ONNX
// InstanceNormalization): each (sample, channel) of an input [N, C, *] is normalised over its
// spatial values with their own mean and biased variance, then scaled and shifted per channel by
// weight and bias [num_features] when affine (PyTorch's default is affine=False). One op for
// every spatial rank; the unbatched forms [C, *] of PyTorch's modules are not taken, since the
// rank alone could not tell them apart. MASE names the 2-D module instance_norm2d.

#include <mase/ir/op/op_base.hpp>

namespace mase::op {

struct instance_norm {
  std::int64_t num_features = 0;
  double eps = 1e-5;
  bool affine = false;

  static constexpr std::string_view name = "instance_norm";
  using kind = mase::kind::module_related_func;
  static constexpr op_category category = op_category::normalization;
  static constexpr arity inputs{1, 1};
  static constexpr auto attributes() {
    return attribute_list{attribute("num_features", &instance_norm::num_features), attribute("eps", &instance_norm::eps),
                      attribute("affine", &instance_norm::affine)};
  }

  constexpr parameter_list parameters() const {
    if (affine) return {{"weight", {num_features}}, {"bias", {num_features}}};
    return {};
  }

  constexpr shape_result infer_shapes(std::span<const shape> in) const {
    if (num_features < 1) return shape_error("instance_norm: num_features must be positive");
    if (in[0].size() < 3)
      return shape_error("instance_norm: the input must be [N, C, *] with at least one spatial dimension");
    if (in[0][1] != num_features)
      return shape_error("instance_norm: the input's channel dimension differs from num_features");
    return shape_ok(in[0]);
  }
  // 5 operations per element (mean, subtract, variance, divide, scale), each way.
  constexpr op_work work(std::span<const shape> in, std::span<const shape>) const {
    return {5 * in[0].numel(), 5 * in[0].numel()};
  }
  constexpr bool operator==(const instance_norm&) const = default;
};

}  // namespace mase::op
