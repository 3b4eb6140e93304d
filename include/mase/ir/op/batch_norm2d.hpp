#pragma once
// Batch normalisation over the channel dimension (torch.nn.BatchNorm2d), input [N, C, H, W]. At
// inference y = (x - running_mean) / sqrt(running_var + eps) * weight + bias. MASE keeps it as a
// module (mase_type "module"). momentum only matters in training; PyTorch's momentum=None
// (cumulative average) is not represented. num_batches_tracked, a training counter, is not a
// parameter here (MASE drops it too).

#include <mase/ir/op/op_base.hpp>

namespace mase::op {

struct batch_norm2d {
  std::int64_t num_features = 0;
  double eps = 1e-5;
  double momentum = 0.1;
  bool affine = true;
  bool track_running_stats = true;

  static constexpr std::string_view name = "batch_norm2d";
  using kind = mase::kind::module;
  static constexpr op_category category = op_category::normalization;
  static constexpr quantizable quantization{.weight = operand_use::optional, .bias = operand_use::optional};
  static constexpr hardware_mapping hardware{"mase_batch_norm"};
  static constexpr arity inputs{1, 1};
  static constexpr auto attributes() {
    return std::tuple{attribute("num_features", &batch_norm2d::num_features),
                      attribute("eps", &batch_norm2d::eps), attribute("momentum", &batch_norm2d::momentum),
                      attribute("affine", &batch_norm2d::affine),
                      attribute("track_running_stats", &batch_norm2d::track_running_stats)};
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
    if (num_features < 1) return shape_error("batch_norm2d: num_features must be positive");
    if (in[0].size() != 4) return shape_error("batch_norm2d: the input must be [N, C, H, W]");
    if (in[0][1] != num_features)
      return shape_error("batch_norm2d: the input's channel dimension differs from num_features");
    return shape_ok(in[0]);
  }
  // 4 operations per element (subtract, divide, scale, shift), each way.
  constexpr op_work work(std::span<const shape> in, std::span<const shape>) const {
    return {4 * in[0].numel(), 4 * in[0].numel()};
  }
  constexpr bool operator==(const batch_norm2d&) const = default;
};

}  // namespace mase::op
