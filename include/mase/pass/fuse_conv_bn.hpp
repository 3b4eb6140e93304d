#pragma once
// fuse_conv_bn: folds a batch normalisation into the convolution before it (MASE's
// conv_bn_fusion_transform_pass, torch.nn.utils.fusion.fuse_conv_bn_eval). Inference semantics:
// the batch norm's running statistics are constants, so per output channel c
//
//   scale_c = gamma_c / sqrt(running_var_c + eps)
//   W'[c]   = W[c] * scale_c
//   b'_c    = (b_c - running_mean_c) * scale_c + beta_c      (b = 0 for a convolution without bias)
//
// and conv'(x) = batch_norm(conv(x)). Patterns: conv1d -> batch_norm1d and conv2d -> batch_norm2d
// (the vocabulary has no conv3d). A pair is fused only when the convolution's result has exactly
// one reader, the batch norm (otherwise the other readers would see normalised values), and the
// batch norm tracks running statistics (without them it normalises with each batch's own
// statistics, which no constant can hold); the info lists the pairs skipped and why. A batch
// norm without affine parameters has gamma = 1, beta = 0. A convolution without bias becomes one
// with bias. The fused parameters are computed in double and rounded to float once.
//
// Metadata: when the graph has common metadata, the fused convolution's entry is kept as
// add_common_metadata would write it, so the common_metadata fact survives: a "bias" argument
// after "weight" (float32, as add_common_metadata gives a new parameter), and its data_out_0 takes
// the batch norm's format, which is what the pair produced and what the readers' data_in entries
// already say. Its software and hardware sections are cleared: their statistics and Verilog
// parameters described the unfused weights. The pass therefore invalidates software metadata,
// statistics, quantization (formats chosen for the unfused weights; the new bias has none) and
// hardware metadata, so a pipeline must re-establish them after fusing.

#include <mase/pass/pipeline.hpp>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <Eigen/Core>
#include <fmt/format.h>

namespace mase {

struct fused_conv_bn {
  std::string conv;        // the convolution, which now holds the fused parameters
  std::string batch_norm;  // the batch norm, removed from the graph
  friend bool operator==(const fused_conv_bn&, const fused_conv_bn&) = default;
};

struct skipped_conv_bn {
  std::string conv;
  std::string batch_norm;
  std::string reason;
  friend bool operator==(const skipped_conv_bn&, const skipped_conv_bn&) = default;
};

struct conv_bn_fusion_info {
  std::vector<fused_conv_bn> fused;      // in graph order
  std::vector<skipped_conv_bn> skipped;  // conv -> batch norm pairs left as they were
  friend bool operator==(const conv_bn_fusion_info&, const conv_bn_fusion_info&) = default;
};

namespace detail {

inline const tensor& conv_bn_parameter(const node& n, std::string_view role) {
  const auto it = n.parameters.find(role);
  if (it == n.parameters.end())
    throw error(fmt::format("fuse_conv_bn: node {} ({}) has no \"{}\" parameter set; set it with "
                            "graph::set_parameter before fusing",
                            n.name, n.op_name(), role));
  return it->second;
}

// The fused convolution's common metadata, as add_common_metadata would write it for the new op.
inline void update_fused_conv_metadata(node& conv, const node& norm, const tensor& weight, const tensor& bias) {
  common_meta& c = conv.meta.common;
  if (c.results.empty()) return;  // no common metadata yet: nothing to keep consistent
  ordered_map<arg_meta> args;
  const bool had_bias = c.args.contains("bias");
  for (auto& [name, value] : c.args) {
    args.insert_or_assign(name, std::move(value));
    if (name == "weight" && !had_bias)
      args.insert_or_assign("bias", tensor_meta{.shape = bias.shape(), .precision = formats::float32, .value = {}});
  }
  // A recorded value must be the parameter now held.
  for (const auto& [role, value] : {std::pair<std::string_view, const tensor*>{"weight", &weight}, {"bias", &bias}})
    if (const auto it = args.find(role); it != args.end())
      if (auto* t = std::get_if<tensor_meta>(&it->second); t != nullptr && t->value) t->value = *value;
  c.args = std::move(args);
  const auto produced = norm.meta.common.results.find(data_out_name(0));
  const auto result = c.results.find(data_out_name(0));
  if (produced != norm.meta.common.results.end() && result != c.results.end())
    result->second.precision = produced->second.precision;
  conv.meta.software = {};
  conv.meta.hardware = {};
}

template <class Conv, class Norm>
void fuse_one(graph& g, node_id conv_id, node_id norm_id, conv_bn_fusion_info& info) {
  const node& conv = g[conv_id];
  const node& norm = g[norm_id];
  const Conv& conv_op = conv.as<Conv>();
  const Norm& norm_op = norm.as<Norm>();

  if (!norm_op.track_running_stats) {
    info.skipped.push_back({conv.name, norm.name,
                            "the batch norm has no running statistics (track_running_stats=false), so it "
                            "normalises with each batch's own statistics, which a convolution cannot hold"});
    return;
  }
  if (const std::size_t readers = g.users(conv_id).size(); readers != 1) {
    info.skipped.push_back({conv.name, norm.name,
                            fmt::format("the convolution's result has {} readers; fusing would change what the "
                                        "others read",
                                        readers)});
    return;
  }
  const std::int64_t channels = conv_op.out_channels;
  require(norm_op.num_features == channels,
          "fuse_conv_bn: batch norm {} has num_features={} but convolution {} has out_channels={}; "
                      "they must be equal (run verify / add_common_metadata to find the inconsistent node)",
                      norm.name, norm_op.num_features, conv.name, channels);

  const tensor& weight = conv_bn_parameter(conv, "weight");
  const tensor* bias = conv_op.bias ? &conv_bn_parameter(conv, "bias") : nullptr;
  const tensor& mean = conv_bn_parameter(norm, "running_mean");
  const tensor& var = conv_bn_parameter(norm, "running_var");
  const tensor* gamma = norm_op.affine ? &conv_bn_parameter(norm, "weight") : nullptr;
  const tensor* beta = norm_op.affine ? &conv_bn_parameter(norm, "bias") : nullptr;

  Eigen::ArrayXd scale(channels);
  for (std::int64_t c = 0; c < channels; ++c) {
    const auto i = static_cast<std::size_t>(c);
    const double denominator = static_cast<double>(var.data()[i]) + norm_op.eps;
    require(denominator > 0.0,
            "fuse_conv_bn: batch norm {} has running_var[{}] + eps = {} (must be positive); a variance "
                        "is never negative: check the running_var parameter",
                        norm.name, c, denominator);
    scale(c) = (gamma ? static_cast<double>(gamma->data()[i]) : 1.0) / std::sqrt(denominator);
  }

  // Rows are output channels: W is [out, in / groups, k…] in row-major order.
  const Eigen::Index per_channel = static_cast<Eigen::Index>(weight.size()) / channels;
  tensor fused_weight(weight.shape());
  Eigen::Map<const Eigen::Array<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>> w(weight.data(), channels,
                                                                                            per_channel);
  Eigen::Map<Eigen::Array<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>> fw(fused_weight.data(), channels,
                                                                                      per_channel);
  fw = (w.cast<double>().colwise() * scale).cast<float>();

  tensor fused_bias(shape{channels});
  for (std::int64_t c = 0; c < channels; ++c) {
    const auto i = static_cast<std::size_t>(c);
    const double b = bias ? static_cast<double>(bias->data()[i]) : 0.0;
    const double shift = beta ? static_cast<double>(beta->data()[i]) : 0.0;
    fused_bias.data()[i] = static_cast<float>((b - static_cast<double>(mean.data()[i])) * scale(c) + shift);
  }

  info.fused.push_back({conv.name, norm.name});
  Conv with_bias = conv_op;
  with_bias.bias = true;
  g.replace_op(conv_id, with_bias);
  update_fused_conv_metadata(g[conv_id], g[norm_id], fused_weight, fused_bias);
  g.set_parameter(conv_id, "weight", std::move(fused_weight));
  g.set_parameter(conv_id, "bias", std::move(fused_bias));
  g.replace_all_uses_with(norm_id, conv_id);
  g.erase(norm_id);
}

}  // namespace detail

// Fuses every conv -> batch norm pair of the graph; returns what was fused and skipped.
inline conv_bn_fusion_info fuse_conv_bn_pairs(graph& g) {
  conv_bn_fusion_info info;
  const std::vector<node_id> order(g.order().begin(), g.order().end());
  for (node_id id : order) {
    if (!g.contains(id)) continue;
    const node& n = g[id];
    if (n.inputs.size() != 1) continue;
    const node_id producer = n.inputs[0];
    if (n.is<op::batch_norm2d>() && g[producer].is<op::conv2d>())
      detail::fuse_one<op::conv2d, op::batch_norm2d>(g, producer, id, info);
    else if (n.is<op::batch_norm1d>() && g[producer].is<op::conv1d>())
      detail::fuse_one<op::conv1d, op::batch_norm1d>(g, producer, id, info);
  }
  return info;
}

struct fuse_conv_bn_pass {
  using needs = facts<>;
  using provides = facts<>;
  using invalidates = facts<fact::software_metadata, fact::statistics, fact::quantized, fact::hardware_metadata>;

  conv_bn_fusion_info run(graph& g) const { return fuse_conv_bn_pairs(g); }
};

inline constexpr fuse_conv_bn_pass fuse_conv_bn{};

}  // namespace mase
