#pragma once
// Maximum over sliding windows (torch.nn.MaxPool1d / 2d / 3d): op::max_pool<Rank>, spelled
// op::max_pool1d, op::max_pool2d and op::max_pool3d. Input [N, C, spatial…] or unbatched
// [C, spatial…]. kernel_size, stride, padding and dilation hold one entry (every dimension) or
// Rank (one per dimension), as PyTorch takes `3` or `(1, 3, 3)`; an empty stride means
// stride = kernel_size (PyTorch's stride=None). Padding counts as -inf. return_indices (a second
// result) is not represented.
//
// Its result keeps its input's format in one and two dimensions; a hardware component in two.

#include <mase/ir/op/shape_rules.hpp>

namespace mase::op {

template <int Rank>
struct max_pool {
  static_assert(Rank >= 1 && Rank <= 3, "op::max_pool<Rank>: PyTorch's max pools are 1-, 2- or 3-d");

  dims kernel_size{};
  dims stride{};
  dims padding{0};
  dims dilation{1};
  bool ceil_mode = false;

  static constexpr fixed_string spelled = shape_rules::ranked_name<"max_pool", Rank>;
  static constexpr std::string_view name = spelled.view();
  using kind = mase::kind::module_related_func;
  static constexpr op_category category = op_category::window;
  static constexpr auto result_format = facet_when<Rank <= 2>(result_format_rule::same_as_input);
  static constexpr auto hardware = facet_when<Rank == 2>(hardware_mapping{"mase_pool2d"});
  static constexpr arity inputs{1, 1};
  static constexpr auto attributes() {
    return attribute_list{attribute("kernel_size", &max_pool::kernel_size), attribute("stride", &max_pool::stride),
                      attribute("padding", &max_pool::padding), attribute("dilation", &max_pool::dilation),
                      attribute("ceil_mode", &max_pool::ceil_mode)};
  }

  constexpr shape_result infer_shapes(std::span<const shape> in) const {
    using shape_rules::batched_or_unbatched, shape_rules::window_entry_counts;
    return shape_rules::pooling_window(
        in[0], Rank, kernel_size, stride, padding, dilation, ceil_mode,
        {.window = {.entry_count = joined<spelled, ": kernel_size, stride, padding and dilation need ",
                                          window_entry_counts<Rank>, " (stride may be empty)">
                                       .c_str(),
                    .entry_value = joined<spelled, ": kernel_size, stride and dilation must be positive "
                                                   "and padding non-negative">
                                       .c_str(),
                    .input_rank = joined<spelled, ": the input must be ", batched_or_unbatched<Rank>>.c_str(),
                    .too_small = joined<spelled, ": the dilated window is larger than the padded input">.c_str()},
         .padding_too_wide = joined<spelled, ": padding must be at most half the kernel size">.c_str()});
  }
  // One operation per window element and result; the gradient one per window element and input.
  constexpr op_work work(std::span<const shape> in, std::span<const shape> out) const {
    const std::int64_t window = shape_rules::window_volume(kernel_size, Rank);
    return {out[0].numel() * window, in[0].numel() * window};
  }
  constexpr bool operator==(const max_pool&) const = default;
};

using max_pool1d = max_pool<1>;
using max_pool2d = max_pool<2>;
using max_pool3d = max_pool<3>;

}  // namespace mase::op
