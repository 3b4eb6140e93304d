#pragma once
// Maximum over sliding windows (torch.nn.MaxPool2d), input [N, C, H, W] or unbatched [C, H, W].
// kernel_size, stride, padding and dilation hold one entry (both dimensions) or two (H, W), as
// PyTorch takes `3` or `(3, 5)`; an empty stride means stride = kernel_size (PyTorch's
// stride=None). Padding counts as -inf. return_indices (a second result) is not represented.

#include <mase/ir/op/shape_rules.hpp>

namespace mase::op {

struct max_pool2d {
  dims kernel_size{};
  dims stride{};
  dims padding{0};
  dims dilation{1};
  bool ceil_mode = false;

  static constexpr std::string_view name = "max_pool2d";
  using kind = mase::kind::module_related_func;
  static constexpr op_category category = op_category::window;
  static constexpr result_format_rule result_format = result_format_rule::same_as_input;
  static constexpr hardware_mapping hardware{"mase_pool2d"};
  static constexpr arity inputs{1, 1};
  static constexpr auto attributes() {
    return std::tuple{attribute("kernel_size", &max_pool2d::kernel_size), attribute("stride", &max_pool2d::stride),
                      attribute("padding", &max_pool2d::padding), attribute("dilation", &max_pool2d::dilation),
                      attribute("ceil_mode", &max_pool2d::ceil_mode)};
  }

  constexpr shape_result infer_shapes(std::span<const shape> in) const {
    return shape_rules::pooling_window(
        in[0], 2, kernel_size, stride, padding, dilation, ceil_mode,
        {.window = {.entry_count = "max_pool2d: kernel_size, stride, padding and dilation "
                                   "need 1 or 2 entries (stride may be empty)",
                    .entry_value = "max_pool2d: kernel_size, stride and dilation must be positive "
                                   "and padding non-negative",
                    .input_rank = "max_pool2d: the input must be [N, C, H, W] or unbatched [C, H, W]",
                    .too_small = "max_pool2d: the dilated window is larger than the padded input"},
         .padding_too_wide = "max_pool2d: padding must be at most half the kernel size"});
  }
  // One operation per window element and result; the gradient one per window element and input.
  constexpr op_work work(std::span<const shape> in, std::span<const shape> out) const {
    const std::int64_t window = shape_rules::window_volume(kernel_size, 2);
    return {out[0].numel() * window, in[0].numel() * window};
  }
  constexpr bool operator==(const max_pool2d&) const = default;
};

}  // namespace mase::op
