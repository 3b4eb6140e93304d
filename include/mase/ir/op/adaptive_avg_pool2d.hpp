#pragma once
// Mean over windows chosen so the result has output_size (torch.nn.AdaptiveAvgPool2d), input
// [N, C, H, W] or unbatched [C, H, W]. output_size holds one entry (both dimensions) or two (H, W);
// PyTorch's None entry (keep the input's size) is resolved into a number by whoever builds the op.

#include <mase/ir/op/shape_rules.hpp>

namespace mase::op {

struct adaptive_avg_pool2d {
  dims output_size{};

  static constexpr std::string_view name = "adaptive_avg_pool2d";
  using kind = mase::kind::module_related_func;
  static constexpr op_category category = op_category::reduction;
  static constexpr arity inputs{1, 1};
  static constexpr auto attributes() {
    return std::tuple{attribute("output_size", &adaptive_avg_pool2d::output_size)};
  }

  constexpr shape_result infer_shapes(std::span<const shape> in) const {
    if (!shape_rules::fits_spatial(output_size, 2))
      return shape_error("adaptive_avg_pool2d: output_size needs 1 or 2 entries");
    for (std::int64_t d : output_size)
      if (d < 1) return shape_error("adaptive_avg_pool2d: output_size's entries must be positive");
    const shape& x = in[0];
    if (x.size() != 3 && x.size() != 4)
      return shape_error("adaptive_avg_pool2d: the input must be [N, C, H, W] or unbatched [C, H, W]");
    // PyTorch's rule: every dimension but the batch must be non-empty to average over.
    for (int d = x.size() - 3; d < x.size(); ++d)
      if (x[d] < 1)
        return shape_error("adaptive_avg_pool2d: the input's channel and spatial dimensions must be non-empty");
    shape out = x;
    for (int i = 0; i < 2; ++i) out[x.size() - 2 + i] = shape_rules::per_dim(output_size, i);
    return shape_ok(out);
  }
  constexpr bool operator==(const adaptive_avg_pool2d&) const = default;
};

}  // namespace mase::op
