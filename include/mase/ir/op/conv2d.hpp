#pragma once
// 2-D convolution (torch.nn.Conv2d / F.conv2d). Input [N, C, H, W] or unbatched [C, H, W];
// weight [out_channels, in_channels / groups, kH, kW], bias [out_channels]. kernel_size, stride,
// padding and dilation hold one entry (both dimensions) or two (H, W), as PyTorch takes `3` or
// `(3, 5)`. PyTorch's padding="valid" is 0; padding="same" must be resolved into numbers by whoever
// builds the op (only odd dilated kernels give the symmetric padding this op can hold).
// padding_mode other than "zeros" is not represented.

#include <mase/ir/op/shape_rules.hpp>

namespace mase::op {

struct conv2d {
  std::int64_t in_channels = 0;
  std::int64_t out_channels = 0;
  dims kernel_size{};
  dims stride{1};
  dims padding{0};
  dims dilation{1};
  std::int64_t groups = 1;
  bool bias = true;

  static constexpr std::string_view name = "conv2d";
  using kind = mase::kind::module_related_func;
  static constexpr op_category category = op_category::dot_product;
  static constexpr result_format_rule result_format = result_format_rule::weighted_sum;
  static constexpr quantizable quantization{.weight = operand_use::required, .bias = operand_use::required_with_parameter};
  static constexpr hardware_mapping hardware{"mase_conv2d"};
  static constexpr arity inputs{1, 1};
  static constexpr auto attributes() {
    return std::tuple{attribute("in_channels", &conv2d::in_channels), attribute("out_channels", &conv2d::out_channels),
                      attribute("kernel_size", &conv2d::kernel_size), attribute("stride", &conv2d::stride),
                      attribute("padding", &conv2d::padding),         attribute("dilation", &conv2d::dilation),
                      attribute("groups", &conv2d::groups),           attribute("bias", &conv2d::bias)};
  }

  constexpr parameter_list parameters() const {
    const std::int64_t per_group = groups > 0 ? in_channels / groups : in_channels;
    parameter_list p{{"weight", {out_channels, per_group, shape_rules::per_dim(kernel_size, 0),
                                 shape_rules::per_dim(kernel_size, 1)}}};
    if (bias) p.push_back({"bias", {out_channels}});
    return p;
  }

  constexpr shape_result infer_shapes(std::span<const shape> in) const {
    if (in_channels < 1 || out_channels < 1 || groups < 1)
      return shape_error("conv2d: in_channels, out_channels and groups must be positive");
    if (in_channels % groups != 0 || out_channels % groups != 0)
      return shape_error("conv2d: in_channels and out_channels must be divisible by groups");
    shape_result r = shape_rules::sliding_window(
        in[0], 2, kernel_size, stride, padding, dilation, false,
        {.entry_count = "conv2d: kernel_size, stride, padding and dilation need 1 or 2 entries",
         .entry_value = "conv2d: kernel_size, stride and dilation must be positive and padding non-negative",
         .input_rank = "conv2d: the input must be [N, C, H, W] or unbatched [C, H, W]",
         .too_small = "conv2d: the dilated kernel is larger than the padded input"});
    if (!r.ok()) return r;
    shape& out = r.shapes[0];
    const int channel = out.size() - 3;
    if (out[channel] != in_channels)
      return shape_error("conv2d: the input's channel dimension differs from in_channels");
    out[channel] = out_channels;
    return r;
  }
  // A window of k…·in_channels/groups terms per result element; the gradient two per window term and input element.
  constexpr op_work work(std::span<const shape> in, std::span<const shape> out) const {
    const std::int64_t window = shape_rules::window_volume(kernel_size, 2) * (in_channels / groups);
    return {out[0].numel() * window, 2 * in[0].numel() * window};
  }
  constexpr bool operator==(const conv2d&) const = default;
};

}  // namespace mase::op
