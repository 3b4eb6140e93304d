#pragma once
// Convolution over 1, 2 or 3 spatial dimensions (torch.nn.Conv1d / Conv2d / Conv3d, F.conv*d):
// op::conv<Rank>, spelled op::conv1d, op::conv2d and op::conv3d. Input [N, C, spatial…] or
// unbatched [C, spatial…]; weight [out_channels, in_channels / groups, k…], bias [out_channels].
// kernel_size, stride, padding and dilation hold one entry (every dimension) or Rank (one per
// dimension), as PyTorch takes `3` or `(3, 5)`. PyTorch's padding="valid" is 0; padding="same"
// must be resolved into numbers by whoever builds the op (only odd dilated kernels give the
// symmetric padding this op can hold). padding_mode other than "zeros" is not represented.
//
// Quantizable in one and two dimensions (MASE's QUANTIZEABLE_OP); a hardware component in two.

#include <mase/ir/op/shape_rules.hpp>

namespace mase::op {

template <int Rank>
struct conv {
  static_assert(Rank >= 1 && Rank <= 3, "op::conv<Rank>: PyTorch's convolutions are 1-, 2- or 3-d");

  std::int64_t in_channels = 0;
  std::int64_t out_channels = 0;
  dims kernel_size{};
  dims stride{1};
  dims padding{0};
  dims dilation{1};
  std::int64_t groups = 1;
  bool bias = true;

  static constexpr fixed_string spelled = shape_rules::ranked_name<"conv", Rank>;
  static constexpr std::string_view name = spelled.view();
  using kind = mase::kind::module_related_func;
  static constexpr op_category category = op_category::dot_product;
  static constexpr auto integer_rule = facet_when<Rank <= 2>(lowering_kind::dot_product);
  static constexpr auto result_format = facet_when<Rank <= 2>(result_format_rule::weighted_sum);
  static constexpr auto quantization = facet_when<Rank <= 2>(
      quantizable{.weight = operand_use::required, .bias = operand_use::required_with_parameter});
  static constexpr auto hardware = facet_when<Rank == 2>(hardware_mapping{"mase_conv2d"});
  static constexpr arity inputs{1, 1};
  static constexpr auto attributes() {
    return attribute_list{attribute("in_channels", &conv::in_channels), attribute("out_channels", &conv::out_channels),
                      attribute("kernel_size", &conv::kernel_size), attribute("stride", &conv::stride),
                      attribute("padding", &conv::padding),         attribute("dilation", &conv::dilation),
                      attribute("groups", &conv::groups),           attribute("bias", &conv::bias)};
  }

  constexpr parameter_list parameters() const {
    const std::int64_t per_group = groups > 0 ? in_channels / groups : in_channels;
    shape weight{out_channels, per_group};
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
    shape_result r = shape_rules::sliding_window(
        in[0], Rank, kernel_size, stride, padding, dilation, false,
        {.entry_count =
             joined<spelled, ": kernel_size, stride, padding and dilation need ", window_entry_counts<Rank>>.c_str(),
         .entry_value =
             joined<spelled, ": kernel_size, stride and dilation must be positive and padding non-negative">.c_str(),
         .input_rank = joined<spelled, ": the input must be ", batched_or_unbatched<Rank>>.c_str(),
         .too_small = joined<spelled, ": the dilated kernel is larger than the padded input">.c_str()});
    if (!r.ok()) return r;
    shape& out = r.shapes[0];
    const int channel = out.size() - (Rank + 1);
    if (out[channel] != in_channels)
      return shape_error(joined<spelled, ": the input's channel dimension differs from in_channels">.c_str());
    out[channel] = out_channels;
    return r;
  }
  // A window of k…·in_channels/groups terms per result element; the gradient two per window term and input element.
  constexpr op_work work(std::span<const shape> in, std::span<const shape> out) const {
    const std::int64_t window = shape_rules::window_volume(kernel_size, Rank) * (in_channels / groups);
    return {out[0].numel() * window, 2 * in[0].numel() * window};
  }
  constexpr bool operator==(const conv&) const = default;
};

using conv1d = conv<1>;
using conv2d = conv<2>;
using conv3d = conv<3>;

}  // namespace mase::op
