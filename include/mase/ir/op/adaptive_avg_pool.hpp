#pragma once
// Mean over windows chosen so the result has output_size (torch.nn.AdaptiveAvgPool1d / 2d):
// op::adaptive_avg_pool<Rank>, spelled op::adaptive_avg_pool1d and op::adaptive_avg_pool2d.
// Input [N, C, spatial…] or unbatched [C, spatial…]. output_size holds one entry (every dimension)
// or Rank (one per dimension); PyTorch's None entry (keep the input's size) is resolved into a
// number by whoever builds the op.

#include <mase/ir/op/shape_rules.hpp>

namespace mase::op {

template <int Rank>
struct adaptive_avg_pool {
  static_assert(Rank == 1 || Rank == 2, "op::adaptive_avg_pool<Rank>: mase has the 1-d and 2-d adaptive pools");

  dims output_size{};

  static constexpr fixed_string spelled = shape_rules::ranked_name<"adaptive_avg_pool", Rank>;
  static constexpr std::string_view name = spelled.view();
  using kind = mase::kind::module_related_func;
  static constexpr op_category category = op_category::reduction;
  static constexpr lowering_kind integer_rule = lowering_kind::mean;
  // Quantizable and in hardware as op::mean is, for global pools only (trailing_count).
  static constexpr quantizable quantization{};
  static constexpr hardware_mapping hardware{"mase_mean"};
  static constexpr arity inputs{1, 1};
  static constexpr auto attributes() { return attribute_list{attribute("output_size", &adaptive_avg_pool::output_size)}; }

  constexpr shape_result infer_shapes(std::span<const shape> in) const {
    if (!shape_rules::fits_spatial(output_size, Rank))
      return shape_error(joined<spelled, ": output_size needs ", shape_rules::window_entry_counts<Rank>>.c_str());
    for (std::int64_t d : output_size)
      if (d < 1) return shape_error(joined<spelled, ": output_size's entries must be positive">.c_str());
    const shape& x = in[0];
    if (x.size() != Rank + 1 && x.size() != Rank + 2)
      return shape_error(joined<spelled, ": the input must be ", shape_rules::batched_or_unbatched<Rank>>.c_str());
    // PyTorch's rule: every dimension but the batch must be non-empty to average over.
    for (int d = x.size() - (Rank + 1); d < x.size(); ++d)
      if (x[d] < 1)
        return shape_error(joined<spelled, ": the input's channel and spatial dimensions must be non-empty">.c_str());
    shape out = x;
    for (int i = 0; i < Rank; ++i) out[x.size() - Rank + i] = shape_rules::per_dim(output_size, i);
    return shape_ok(out);
  }
  // How many values each result averages when every output size is 1 (global average pooling,
  // op::mean::trailing_count's case); 0 otherwise.
  constexpr std::int64_t trailing_count(const shape& in) const noexcept {
    if (in.size() < Rank + 1 || !shape_rules::fits_spatial(output_size, Rank)) return 0;
    std::int64_t count = 1;
    for (int i = 0; i < Rank; ++i) {
      if (shape_rules::per_dim(output_size, i) != 1) return 0;
      count *= in[in.size() - Rank + i];
    }
    return count;
  }
  constexpr bool operator==(const adaptive_avg_pool&) const = default;
};

using adaptive_avg_pool1d = adaptive_avg_pool<1>;
using adaptive_avg_pool2d = adaptive_avg_pool<2>;

}  // namespace mase::op
