#pragma once
// Mean over sliding windows (torch.nn.AvgPool3d), input [N, C, D, H, W] or unbatched
// [C, D, H, W]. kernel_size, stride and padding hold one entry (every dimension) or three
// (D, H, W), as PyTorch takes `3` or `(1, 3, 3)`; an empty stride means stride = kernel_size
// (PyTorch's stride=None). count_include_pad: whether the zero padding counts in a window's
// divisor. divisor_override, when positive, replaces the divisor (PyTorch's divisor_override; 0 is
// None).

#include <mase/ir/op/shape_rules.hpp>

namespace mase::op {

struct avg_pool3d {
  dims kernel_size{};
  dims stride{};
  dims padding{0};
  bool ceil_mode = false;
  bool count_include_pad = true;
  std::int64_t divisor_override = 0;

  static constexpr std::string_view name = "avg_pool3d";
  using kind = mase::kind::module_related_func;
  static constexpr op_category category = op_category::window;
  static constexpr lowering_kind integer_rule = lowering_kind::window_mean;
  static constexpr arity inputs{1, 1};
  static constexpr auto attributes() {
    return attribute_list{attribute("kernel_size", &avg_pool3d::kernel_size), attribute("stride", &avg_pool3d::stride),
                      attribute("padding", &avg_pool3d::padding), attribute("ceil_mode", &avg_pool3d::ceil_mode),
                      attribute("count_include_pad", &avg_pool3d::count_include_pad),
                      attribute("divisor_override", &avg_pool3d::divisor_override)};
  }

  constexpr shape_result infer_shapes(std::span<const shape> in) const {
    if (divisor_override < 0) return shape_error("avg_pool3d: divisor_override must be positive, or 0 for none");
    return shape_rules::pooling_window(
        in[0], 3, kernel_size, stride, padding, dims{1}, ceil_mode,
        {.window = {.entry_count = "avg_pool3d: kernel_size, stride and padding need 1 or 3 entries "
                                   "(stride may be empty)",
                    .entry_value = "avg_pool3d: kernel_size and stride must be positive and padding non-negative",
                    .input_rank = "avg_pool3d: the input must be [N, C, D, H, W] or unbatched [C, D, H, W]",
                    .too_small = "avg_pool3d: the window is larger than the padded input"},
         .padding_too_wide = "avg_pool3d: padding must be at most half the kernel size"});
  }
  // One operation per window element and result; the gradient one per window element and input.
  constexpr op_work work(std::span<const shape> in, std::span<const shape> out) const {
    const std::int64_t window = shape_rules::window_volume(kernel_size, 3);
    return {out[0].numel() * window, in[0].numel() * window};
  }
  constexpr bool operator==(const avg_pool3d&) const = default;
};

}  // namespace mase::op
