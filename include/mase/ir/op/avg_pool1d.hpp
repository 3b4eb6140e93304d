#pragma once
// Mean over sliding windows (torch.nn.AvgPool1d), input [N, C, L] or unbatched [C, L].
// kernel_size, stride and padding hold one entry each; an empty stride means stride = kernel_size
// (PyTorch's stride=None). count_include_pad: whether the zero padding counts in a window's
// divisor.

#include <mase/ir/op/shape_rules.hpp>

namespace mase::op {

struct avg_pool1d {
  dims kernel_size{};
  dims stride{};
  dims padding{0};
  bool ceil_mode = false;
  bool count_include_pad = true;

  static constexpr std::string_view name = "avg_pool1d";
  using kind = mase::kind::module_related_func;
  static constexpr op_category category = op_category::window;
  static constexpr lowering_kind integer_rule = lowering_kind::window_mean;
  static constexpr arity inputs{1, 1};
  static constexpr auto attributes() {
    return attribute_list{attribute("kernel_size", &avg_pool1d::kernel_size), attribute("stride", &avg_pool1d::stride),
                      attribute("padding", &avg_pool1d::padding), attribute("ceil_mode", &avg_pool1d::ceil_mode),
                      attribute("count_include_pad", &avg_pool1d::count_include_pad)};
  }

  constexpr shape_result infer_shapes(std::span<const shape> in) const {
    return shape_rules::pooling_window(
        in[0], 1, kernel_size, stride, padding, dims{1}, ceil_mode,
        {.window = {.entry_count = "avg_pool1d: kernel_size, stride and padding need exactly 1 entry "
                                   "(stride may be empty)",
                    .entry_value = "avg_pool1d: kernel_size and stride must be positive and padding non-negative",
                    .input_rank = "avg_pool1d: the input must be [N, C, L] or unbatched [C, L]",
                    .too_small = "avg_pool1d: the window is larger than the padded input"},
         .padding_too_wide = "avg_pool1d: padding must be at most half the kernel size"});
  }
  // One operation per window element and result; the gradient one per window element and input.
  constexpr op_work work(std::span<const shape> in, std::span<const shape> out) const {
    const std::int64_t window = shape_rules::window_volume(kernel_size, 1);
    return {out[0].numel() * window, in[0].numel() * window};
  }
  constexpr bool operator==(const avg_pool1d&) const = default;
};

}  // namespace mase::op
