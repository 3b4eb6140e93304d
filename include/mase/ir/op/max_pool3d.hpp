#pragma once
// Maximum over sliding windows (torch.nn.MaxPool3d), input [N, C, D, H, W] or unbatched
// [C, D, H, W]. kernel_size, stride, padding and dilation hold one entry (every dimension) or
// three (D, H, W), as PyTorch takes `3` or `(1, 3, 3)`; an empty stride means stride = kernel_size
// (PyTorch's stride=None). Padding counts as -inf. return_indices (a second result) is not
// represented.

#include <mase/ir/op/shape_rules.hpp>

namespace mase::op {

struct max_pool3d {
  dims kernel_size{};
  dims stride{};
  dims padding{0};
  dims dilation{1};
  bool ceil_mode = false;

  static constexpr std::string_view name = "max_pool3d";
  using kind = mase::kind::module_related_func;
  static constexpr op_category category = op_category::window;
  static constexpr arity inputs{1, 1};
  static constexpr auto attributes() {
    return std::tuple{attribute("kernel_size", &max_pool3d::kernel_size), attribute("stride", &max_pool3d::stride),
                      attribute("padding", &max_pool3d::padding), attribute("dilation", &max_pool3d::dilation),
                      attribute("ceil_mode", &max_pool3d::ceil_mode)};
  }

  constexpr shape_result infer_shapes(std::span<const shape> in) const {
    return shape_rules::pooling_window(
        in[0], 3, kernel_size, stride, padding, dilation, ceil_mode,
        {.window = {.entry_count = "max_pool3d: kernel_size, stride, padding and dilation "
                                   "need 1 or 3 entries (stride may be empty)",
                    .entry_value = "max_pool3d: kernel_size, stride and dilation must be positive "
                                   "and padding non-negative",
                    .input_rank = "max_pool3d: the input must be [N, C, D, H, W] or unbatched [C, D, H, W]",
                    .too_small = "max_pool3d: the dilated window is larger than the padded input"},
         .padding_too_wide = "max_pool3d: padding must be at most half the kernel size"});
  }
  // One operation per window element and result; the gradient one per window element and input.
  constexpr op_work work(std::span<const shape> in, std::span<const shape> out) const {
    const std::int64_t window = shape_rules::window_volume(kernel_size, 3);
    return {out[0].numel() * window, in[0].numel() * window};
  }
  constexpr bool operator==(const max_pool3d&) const = default;
};

}  // namespace mase::op
