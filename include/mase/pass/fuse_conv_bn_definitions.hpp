#pragma once
// fuse_conv_bn's body (pass/fuse_conv_bn.hpp declares it): inline in the header-only mode,
// compiled once in mase::mase (src/passes.cpp) otherwise.

#include <mase/pass/fuse_conv_bn.hpp>

// A unit that links the compiled library (mase::mase) gets these from the library; defining them again here would
// break the link with duplicate symbols.
#if MASE_EXTERN_INSTANTIATIONS && !defined(MASE_DEFINE_COMPILED)
#error "this header holds definitions that the compiled library (mase::mase) provides; include <mase/pass/fuse_conv_bn.hpp> instead"
#endif

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <Eigen/Core>
#include <fmt/core.h>

namespace mase {

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
MASE_COMPILED_INLINE conv_bn_fusion_info fuse_conv_bn_pairs(graph& g) {
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

}  // namespace mase
