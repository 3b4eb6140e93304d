#pragma once
// Mean over windows chosen so the result has output_size (torch.nn.AdaptiveAvgPool1d), input
// [N, C, L] or unbatched [C, L]. output_size holds one entry.

#include <mase/ir/op/shape_rules.hpp>

namespace mase::op {

struct adaptive_avg_pool1d {
  dims output_size{};

  static constexpr std::string_view name = "adaptive_avg_pool1d";
  using kind = mase::kind::module_related_func;
  static constexpr op_category category = op_category::reduction;
  static constexpr arity inputs{1, 1};
  static constexpr auto attributes() {
    return std::tuple{attribute("output_size", &adaptive_avg_pool1d::output_size)};
  }

  constexpr shape_result infer_shapes(std::span<const shape> in) const {
    if (!shape_rules::fits_spatial(output_size, 1))
      return shape_error("adaptive_avg_pool1d: output_size needs exactly 1 entry");
    for (std::int64_t d : output_size)
      if (d < 1) return shape_error("adaptive_avg_pool1d: output_size's entries must be positive");
    const shape& x = in[0];
    if (x.size() != 2 && x.size() != 3)
      return shape_error("adaptive_avg_pool1d: the input must be [N, C, L] or unbatched [C, L]");
    // PyTorch's rule: every dimension but the batch must be non-empty to average over.
    for (int d = x.size() - 2; d < x.size(); ++d)
      if (x[d] < 1)
        return shape_error("adaptive_avg_pool1d: the input's channel and spatial dimensions must be non-empty");
    shape out = x;
    for (int i = 0; i < 1; ++i) out[x.size() - 1 + i] = shape_rules::per_dim(output_size, i);
    return shape_ok(out);
  }
  constexpr bool operator==(const adaptive_avg_pool1d&) const = default;
};

}  // namespace mase::op
