#pragma once
// Transposed convolution over 1 or 2 spatial dimensions (torch.nn.ConvTranspose1d / 2d,
// F.conv_transpose*d): op::conv_transpose<Rank>, spelled op::conv_transpose1d and
// op::conv_transpose2d. The gradient of conv<Rank> with respect to its input: every input element
// scatters its kernel-weighted copy into the output. Input [N, C, spatial…] or unbatched
// [C, spatial…]; weight [in_channels, out_channels / groups, k…] (PyTorch's order: input channels
// first), bias [out_channels]. Each output size is
// (in − 1)·stride − 2·padding + dilation·(k − 1) + output_padding + 1; output_padding (extra rows
// at the end, which only the bias reaches) must be below stride or dilation, as PyTorch requires.
// kernel_size, stride, padding, output_padding and dilation hold one entry (every dimension) or
// Rank (one per dimension).

#include <mase/ir/op/shape_rules.hpp>

namespace mase::op {

template <int Rank>
struct conv_transpose {
  static_assert(Rank == 1 || Rank == 2, "op::conv_transpose<Rank>: mase has the 1-d and 2-d transposed convolutions");

  std::int64_t in_channels = 0;
  std::int64_t out_channels = 0;
  dims kernel_size{};
  dims stride{1};
  dims padding{0};
  dims output_padding{0};
  std::int64_t groups = 1;
  bool bias = true;
  dims dilation{1};

  static constexpr fixed_string spelled = shape_rules::ranked_name<"conv_transpose", Rank>;
  static constexpr std::string_view name = spelled.view();
  using kind = mase::kind::module_related_func;
  static constexpr op_category category = op_category::dot_product;
  static constexpr arity inputs{1, 1};
  static constexpr auto attributes() {
    return attribute_list{attribute("in_channels", &conv_transpose::in_channels),
                      attribute("out_channels", &conv_transpose::out_channels),
                      attribute("kernel_size", &conv_transpose::kernel_size),
                      attribute("stride", &conv_transpose::stride),
                      attribute("padding", &conv_transpose::padding),
                      attribute("output_padding", &conv_transpose::output_padding),
                      attribute("groups", &conv_transpose::groups),
                      attribute("bias", &conv_transpose::bias),
                      attribute("dilation", &conv_transpose::dilation)};
  }

  constexpr parameter_list parameters() const {
    const std::int64_t per_group = groups > 0 ? out_channels / groups : out_channels;
    shape weight{in_channels, per_group};
    for (int d = 0; d < Rank; ++d) weight.push_back(shape_rules::per_dim(kernel_size, d));
    parameter_list p{{"weight", weight}};
    if (bias) p.push_back({"bias", {out_channels}});
    return p;
  }

  constexpr shape_result infer_shapes(std::span<const shape> in) const {
    using shape_rules::batched_or_unbatched, shape_rules::window_entry_counts;
    if (in_channels < 1 || out_channels < 1 || groups < 1)
      return shape_error(joined<spelled, ": in_channels, out_channels and groups must be positive">.c_str());
    if (in_channels % groups != 0 || out_channels % groups != 0)
      return shape_error(joined<spelled, ": in_channels and out_channels must be divisible by groups">.c_str());
    shape_result r = shape_rules::transposed_window(
        in[0], Rank, kernel_size, stride, padding, output_padding, dilation,
        {.entry_count = joined<spelled, ": kernel_size, stride, padding, output_padding and dilation need ",
                               window_entry_counts<Rank>>
                            .c_str(),
         .entry_value = joined<spelled, ": kernel_size, stride and dilation must be positive, padding and "
                                        "output_padding non-negative">
                            .c_str(),
         .output_padding = joined<spelled, ": output_padding must be smaller than stride or dilation">.c_str(),
         .input_rank = joined<spelled, ": the input must be ", batched_or_unbatched<Rank>>.c_str(),
         .too_small = joined<spelled, ": the output would be empty (an empty input, or padding that crops every "
                                      "position)">
                          .c_str()});
    if (!r.ok()) return r;
    shape& out = r.shapes[0];
    const int channel = out.size() - (Rank + 1);
    if (out[channel] != in_channels)
      return shape_error(joined<spelled, ": the input's channel dimension differs from in_channels">.c_str());
    out[channel] = out_channels;
    return r;
  }
  // Each input element is multiplied by the out_channels/groups·k… weights it touches.
  constexpr op_work work(std::span<const shape> in, std::span<const shape>) const {
    const std::int64_t window = shape_rules::window_volume(kernel_size, Rank) * (out_channels / groups);
    return {in[0].numel() * window, 2 * in[0].numel() * window};
  }
  constexpr bool operator==(const conv_transpose&) const = default;
};

using conv_transpose1d = conv_transpose<1>;
using conv_transpose2d = conv_transpose<2>;

}  // namespace mase::op
