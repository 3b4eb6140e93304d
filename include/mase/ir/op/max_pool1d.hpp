#pragma once
// Maximum over sliding windows (torch.nn.MaxPool1d), input [N, C, L] or unbatched [C, L].
// kernel_size, stride, padding and dilation hold one entry each; an empty stride means
// stride = kernel_size (PyTorch's stride=None). Padding counts as -inf. return_indices (a second
// result) is not represented.

#include <mase/ir/op/shape_rules.hpp>

namespace mase::op {

struct max_pool1d {
  dims kernel_size{};
  dims stride{};
  dims padding{0};
  dims dilation{1};
  bool ceil_mode = false;

  static constexpr std::string_view name = "max_pool1d";
  using kind = mase::kind::module_related_func;
  static constexpr op_category category = op_category::window;
  static constexpr result_format_rule result_format = result_format_rule::same_as_input;
  static constexpr arity inputs{1, 1};
  static constexpr auto attributes() {
    return std::tuple{attribute("kernel_size", &max_pool1d::kernel_size), attribute("stride", &max_pool1d::stride),
                      attribute("padding", &max_pool1d::padding), attribute("dilation", &max_pool1d::dilation),
                      attribute("ceil_mode", &max_pool1d::ceil_mode)};
  }

  constexpr shape_result infer_shapes(std::span<const shape> in) const {
    return shape_rules::pooling_window(
        in[0], 1, kernel_size, stride, padding, dilation, ceil_mode,
        {.window = {.entry_count = "max_pool1d: kernel_size, stride, padding and dilation "
                                   "need exactly 1 entry (stride may be empty)",
                    .entry_value = "max_pool1d: kernel_size, stride and dilation must be positive "
                                   "and padding non-negative",
                    .input_rank = "max_pool1d: the input must be [N, C, L] or unbatched [C, L]",
                    .too_small = "max_pool1d: the dilated window is larger than the padded input"},
         .padding_too_wide = "max_pool1d: padding must be at most half the kernel size"});
  }
  // One operation per window element and result; the gradient one per window element and input.
  constexpr op_work work(std::span<const shape> in, std::span<const shape> out) const {
    const std::int64_t window = shape_rules::window_volume(kernel_size, 1);
    return {out[0].numel() * window, in[0].numel() * window};
  }
  constexpr bool operator==(const max_pool1d&) const = default;
};

}  // namespace mase::op
