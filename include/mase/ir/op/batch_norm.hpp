#pragma once
// Batch normalisation over the channel dimension (torch.nn.BatchNorm1d / 2d / 3d):
// op::batch_norm<Rank>, spelled op::batch_norm1d, op::batch_norm2d and op::batch_norm3d. Input
// [N, C] or [N, C, L] (1-d), [N, C, H, W] (2-d), [N, C, D, H, W] (3-d). At inference
// y = (x - running_mean) / sqrt(running_var + eps) * weight + bias. MASE keeps it as a module
// (mase_type "module"). momentum only matters in training; PyTorch's momentum=None (cumulative
// average) is not represented. num_batches_tracked, a training counter, is not a parameter here
// (MASE drops it too).
//
// Quantizable, with a hardware component (mase_batch_norm), in one and two dimensions.

#include <mase/ir/op/shape_rules.hpp>

namespace mase::op {

template <int Rank>
struct batch_norm {
  static_assert(Rank >= 1 && Rank <= 3, "op::batch_norm<Rank>: PyTorch's batch norms are 1-, 2- or 3-d");

  std::int64_t num_features = 0;
  double eps = 1e-5;
  double momentum = 0.1;
  bool affine = true;
  bool track_running_stats = true;

  static constexpr fixed_string spelled = shape_rules::ranked_name<"batch_norm", Rank>;
  static constexpr std::string_view name = spelled.view();
  using kind = mase::kind::module;
  static constexpr op_category category = op_category::normalization;
  static constexpr auto integer_rule = facet_when<Rank <= 2>(lowering_kind::scale_shift);
  static constexpr auto quantization =
      facet_when<Rank <= 2>(quantizable{.weight = operand_use::optional, .bias = operand_use::optional});
  static constexpr auto hardware = facet_when<Rank <= 2>(hardware_mapping{"mase_batch_norm"});
  static constexpr arity inputs{1, 1};
  static constexpr auto attributes() {
    return attribute_list{attribute("num_features", &batch_norm::num_features), attribute("eps", &batch_norm::eps),
                      attribute("momentum", &batch_norm::momentum), attribute("affine", &batch_norm::affine),
                      attribute("track_running_stats", &batch_norm::track_running_stats)};
  }

  constexpr parameter_list parameters() const {
    parameter_list p;
    if (affine) {
      p.push_back({"weight", {num_features}});
      p.push_back({"bias", {num_features}});
    }
    if (track_running_stats) {
      p.push_back({"running_mean", {num_features}});
      p.push_back({"running_var", {num_features}});
    }
    return p;
  }

  constexpr shape_result infer_shapes(std::span<const shape> in) const {
    if (num_features < 1) return shape_error(joined<spelled, ": num_features must be positive">.c_str());
    // BatchNorm1d also takes [N, C] (features without a length).
    const bool rank_ok = in[0].size() == Rank + 2 || (Rank == 1 && in[0].size() == 2);
    if (!rank_ok) {
      if constexpr (Rank == 1) return shape_error(joined<spelled, ": the input must be [N, C] or [N, C, L]">.c_str());
      else return shape_error(joined<spelled, ": the input must be [N, C, ", shape_rules::spatial_letters<Rank>, "]">.c_str());
    }
    if (in[0][1] != num_features)
      return shape_error(joined<spelled, ": the input's channel dimension differs from num_features">.c_str());
    return shape_ok(in[0]);
  }
  // 4 operations per element (subtract, divide, scale, shift), each way.
  constexpr op_work work(std::span<const shape> in, std::span<const shape>) const {
    return {4 * in[0].numel(), 4 * in[0].numel()};
  }
  constexpr bool operator==(const batch_norm&) const = default;
};

using batch_norm1d = batch_norm<1>;
using batch_norm2d = batch_norm<2>;
using batch_norm3d = batch_norm<3>;

}  // namespace mase::op
