#pragma once
// Group normalisation (torch.nn.GroupNorm): the channels of an input [N, C, *] are split into
// num_groups groups, each normalised over its channels and the spatial dimensions; then a
// per-channel weight and bias [num_channels] when affine.

#include <mase/ir/op/op_base.hpp>

namespace mase::op {

struct group_norm {
  std::int64_t num_groups = 1;
  std::int64_t num_channels = 0;
  double eps = 1e-5;
  bool affine = true;

  static constexpr std::string_view name = "group_norm";
  using kind = mase::kind::module_related_func;
  static constexpr op_category category = op_category::normalization;
  static constexpr quantizable quantization{};
  static constexpr arity inputs{1, 1};
  static constexpr auto attributes() {
    return attribute_list{attribute("num_groups", &group_norm::num_groups),
                      attribute("num_channels", &group_norm::num_channels), attribute("eps", &group_norm::eps),
                      attribute("affine", &group_norm::affine)};
  }

  constexpr parameter_list parameters() const {
    if (affine) return {{"weight", {num_channels}}, {"bias", {num_channels}}};
    return {};
  }

  constexpr shape_result infer_shapes(std::span<const shape> in) const {
    if (num_groups < 1 || num_channels < 1)
      return shape_error("group_norm: num_groups and num_channels must be positive");
    if (num_channels % num_groups != 0) return shape_error("group_norm: num_channels must be divisible by num_groups");
    if (in[0].size() < 2) return shape_error("group_norm: the input must be [N, C, *]");
    if (in[0][1] != num_channels)
      return shape_error("group_norm: the input's channel dimension differs from num_channels");
    return shape_ok(in[0]);
  }
  // 5 operations per element (mean, subtract, variance, divide, scale), each way.
  constexpr op_work work(std::span<const shape> in, std::span<const shape>) const {
    return {5 * in[0].numel(), 5 * in[0].numel()};
  }
  constexpr bool operator==(const group_norm&) const = default;
};

}  // namespace mase::op
