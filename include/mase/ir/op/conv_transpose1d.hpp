#pragma once
// 1-D transposed convolution (torch.nn.ConvTranspose1d / F.conv_transpose1d), the gradient of
// conv1d with respect to its input: every input element scatters its kernel-weighted copy into
// the output. Input [N, C, L] or unbatched [C, L]; weight [in_channels, out_channels / groups, k]
// (PyTorch's order: input channels first), bias [out_channels]. The output length is
// (L − 1)·stride − 2·padding + dilation·(k − 1) + output_padding + 1; output_padding (extra rows at
// the end, which only the bias reaches) must be below stride or dilation, as PyTorch requires.
// kernel_size, stride, padding, output_padding and dilation hold one entry each.

#include <mase/ir/op/shape_rules.hpp>

namespace mase::op {

struct conv_transpose1d {
  std::int64_t in_channels = 0;
  std::int64_t out_channels = 0;
  dims kernel_size{};
  dims stride{1};
  dims padding{0};
  dims output_padding{0};
  std::int64_t groups = 1;
  bool bias = true;
  dims dilation{1};

  static constexpr std::string_view name = "conv_transpose1d";
  using kind = mase::kind::module_related_func;
  static constexpr op_category category = op_category::dot_product;
  static constexpr arity inputs{1, 1};
  static constexpr auto attributes() {
    return std::tuple{attribute("in_channels", &conv_transpose1d::in_channels),
                      attribute("out_channels", &conv_transpose1d::out_channels),
                      attribute("kernel_size", &conv_transpose1d::kernel_size),
                      attribute("stride", &conv_transpose1d::stride),
                      attribute("padding", &conv_transpose1d::padding),
                      attribute("output_padding", &conv_transpose1d::output_padding),
                      attribute("groups", &conv_transpose1d::groups),
                      attribute("bias", &conv_transpose1d::bias),
                      attribute("dilation", &conv_transpose1d::dilation)};
  }

  constexpr parameter_list parameters() const {
    const std::int64_t per_group = groups > 0 ? out_channels / groups : out_channels;
    parameter_list p{{"weight", {in_channels, per_group, shape_rules::per_dim(kernel_size, 0)}}};
    if (bias) p.push_back({"bias", {out_channels}});
    return p;
  }

  constexpr shape_result infer_shapes(std::span<const shape> in) const {
    if (in_channels < 1 || out_channels < 1 || groups < 1)
      return shape_error("conv_transpose1d: in_channels, out_channels and groups must be positive");
    if (in_channels % groups != 0 || out_channels % groups != 0)
      return shape_error("conv_transpose1d: in_channels and out_channels must be divisible by groups");
    shape_result r = shape_rules::transposed_window(
        in[0], 1, kernel_size, stride, padding, output_padding, dilation,
        {.entry_count = "conv_transpose1d: kernel_size, stride, padding, output_padding and dilation need exactly 1 "
                        "entry",
         .entry_value = "conv_transpose1d: kernel_size, stride and dilation must be positive, padding and "
                        "output_padding non-negative",
         .output_padding = "conv_transpose1d: output_padding must be smaller than stride or dilation",
         .input_rank = "conv_transpose1d: the input must be [N, C, L] or unbatched [C, L]",
         .too_small = "conv_transpose1d: the output would be empty (an empty input, or padding that crops every "
                      "position)"});
    if (!r.ok()) return r;
    shape& out = r.shapes[0];
    const int channel = out.size() - 2;
    if (out[channel] != in_channels)
      return shape_error("conv_transpose1d: the input's channel dimension differs from in_channels");
    out[channel] = out_channels;
    return r;
  }
  // Each input element is multiplied by the out_channels/groups·k… weights it touches.
  constexpr op_work work(std::span<const shape> in, std::span<const shape>) const {
    const std::int64_t window = shape_rules::window_volume(kernel_size, 1) * (out_channels / groups);
    return {in[0].numel() * window, 2 * in[0].numel() * window};
  }
  constexpr bool operator==(const conv_transpose1d&) const = default;
};

}  // namespace mase::op
