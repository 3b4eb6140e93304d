#pragma once
// The stream helpers' definitions (verilog/stream_metadata.hpp declares them): inline in the
// header-only mode, compiled once in mase::mase (src/passes.cpp) otherwise.

#include <mase/verilog/stream_metadata.hpp>

// A unit that links the compiled library (mase::mase) gets these from the library; defining them again here would
// break the link with duplicate symbols.
#if MASE_EXTERN_INSTANTIATIONS && !defined(MASE_DEFINE_COMPILED)
#error "this header holds definitions that the compiled library (mase::mase) provides; include <mase/verilog/stream_metadata.hpp> instead"
#endif

#include <mase/verilog/components.hpp>

#include <algorithm>
#include <bit>
#include <cctype>
#include <cstdint>
#include <numeric>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/core.h>

namespace mase {

MASE_COMPILED_INLINE std::vector<std::string> hardware_dependence_files(std::string_view module) {
  if (const verilog::component* c = verilog::find_component(module)) return hardware_dependence_files(*c);
  return {fmt::format("{}.sv", module)};
}

MASE_COMPILED_INLINE std::vector<std::string> hardware_dependence_files(const verilog::component& c) {
  std::vector<std::string> files{fmt::format("{}.sv", c.module)};
  for (std::string_view needed : c.needs) files.push_back(fmt::format("{}.sv", needed));
  return files;
}

MASE_COMPILED_INLINE std::size_t stream_input_count(const node& n) {
  const hardware_mapping* h = n.op.hardware();
  return h == nullptr || h->stream_inputs < 0 ? n.inputs.size() : static_cast<std::size_t>(h->stream_inputs);
}

MASE_COMPILED_INLINE bool is_stream_input(const graph& g, const node& n, std::size_t i) {
  if (i >= stream_input_count(n)) return false;
  const hardware_mapping* h = n.op.hardware();
  return !(h != nullptr && h->constant_operands && g[n.inputs[i]].is<op::constant>());
}

MASE_COMPILED_INLINE bool keeps_element_order(const node& n) {
  const auto* permutation = n.op.get_if<op::permute>();
  const auto in = n.meta.common.args.find("data_in_0");
  if (permutation == nullptr || in == n.meta.common.args.end()) return false;
  const tensor_meta* t = std::get_if<tensor_meta>(&in->second);
  if (t == nullptr) return false;
  const auto rank = static_cast<std::int64_t>(t->shape.size());
  std::int64_t previous = -1;
  for (std::int64_t d : permutation->dims) {
    if (d < 0) d += rank;
    if (d < 0 || d >= rank) return false;
    if (t->shape[d] == 1) continue;
    if (d < previous) return false;
    previous = d;
  }
  return true;
}

MASE_COMPILED_INLINE bool is_implicit_in_hardware(const node& n) {
  const hardware_mapping* h = n.op.hardware();
  return h != nullptr && (h->wired_through() || keeps_element_order(n));
}

namespace detail {

MASE_COMPILED_INLINE std::string upper(std::string_view s) {
  std::string u(s);
  for (char& c : u) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return u;
}

MASE_COMPILED_INLINE const tensor_meta* entry_meta(const node& n, std::string_view entry) {
  if (const auto r = n.meta.common.results.find(entry); r != n.meta.common.results.end()) return &r->second;
  const auto a = n.meta.common.args.find(entry);
  return a == n.meta.common.args.end() ? nullptr : std::get_if<tensor_meta>(&a->second);
}

MASE_COMPILED_INLINE fixed_fmt hardware_format(const node& n, std::string_view entry) {
  const tensor_meta* t = entry_meta(n, entry);
  require(t != nullptr, "add_hardware_metadata: node {} ({}) has no metadata for {}; run "
                                    "add_common_metadata and quantize first",
                                    n.name, n.op_name(), entry);
  // The MASE TOML keys that set this entry's format (data_out_0 → data_out_width, …).
  const std::string_view operand = entry.starts_with("data_out") ? "data_out"
                                   : entry.starts_with("data_in") ? "data_in"
                                                                  : entry;
  require(t->precision.holds<fixed_fmt>(),
          "add_hardware_metadata: node {} ({}): {} has format {}, but the hardware components are fixed "
                      "point; quantize the node with a fixed-point config (name = \"fixed\" or \"integer\") that "
                      "gives {}_width and {}_frac_width",
                      n.name, n.op_name(), entry, to_string(t->precision), operand, operand);
  const fixed_fmt f = t->precision.get<fixed_fmt>();
  require(f.is_signed, "add_hardware_metadata: node {} ({}): {} is unsigned ({}); the hardware "
                                   "components are two's complement, so give its {} a signed format (name = "
                                   "\"fixed\")",
                                   n.name, n.op_name(), entry, to_string(t->precision), operand);
  return f;
}

MASE_COMPILED_INLINE void add_tensor_parameters(ordered_map<verilog_value>& params, const node& n, std::string_view entry,
                                                std::vector<std::int64_t> parallelism) {
  const std::string key = upper(entry);
  const fixed_fmt f = hardware_format(n, entry);
  const shape& s = entry_meta(n, entry)->shape;
  params.insert_or_assign(key + "_PRECISION_0", std::int64_t{f.width});
  params.insert_or_assign(key + "_PRECISION_1", std::int64_t{f.frac});
  const int rank = s.size();
  parallelism.resize(static_cast<std::size_t>(std::max(rank, 1)), 1);
  for (int d = 0; d < rank; ++d) params.insert_or_assign(fmt::format("{}_TENSOR_SIZE_DIM_{}", key, d), s[rank - 1 - d]);
  for (int d = 0; d < std::max(rank, 1); ++d)
    params.insert_or_assign(fmt::format("{}_PARALLELISM_DIM_{}", key, d), parallelism[static_cast<std::size_t>(d)]);
}

MASE_COMPILED_INLINE std::int64_t window_dim(const dims& d, int axis, std::int64_t fallback) {
  if (d.empty()) return fallback;
  return d.size() == 1 ? d[0] : d[axis];
}

MASE_COMPILED_INLINE std::int64_t innermost(const node& n, std::string_view entry) {
  const tensor_meta* t = entry_meta(n, entry);
  return t == nullptr || t->shape.empty() ? 1 : t->shape.back();
}

MASE_COMPILED_INLINE bool takes_or_gives_a_map(const node& n) {
  const auto is_map = [&](std::string_view entry) {
    const tensor_meta* t = entry_meta(n, entry);
    return t != nullptr && t->shape.size() == 4;
  };
  bool map = is_map("data_out_0");
  for (std::size_t i = 0; i < n.inputs.size(); ++i) map = map || is_map(data_in_name(i));
  return map;
}

MASE_COMPILED_INLINE bool channels_last_entry(const node& n, std::string_view entry) {
  const tensor_meta* t = entry_meta(n, entry);
  return n.meta.hardware.channels_last && t != nullptr && t->shape.size() == 4;
}

MASE_COMPILED_INLINE std::int64_t stream_innermost(const node& n, std::string_view entry) {
  return channels_last_entry(n, entry) ? entry_meta(n, entry)->shape[1] : innermost(n, entry);
}

MASE_COMPILED_INLINE void check_channels_last_support(const graph& g, const node& n) {
  const std::string_view module = *n.meta.hardware.module;
  if (!n.meta.hardware.channels_last) return;
  const auto refuse = [&](std::string_view why) {
    throw error(fmt::format("add_hardware_metadata: node {} ({}) {}; channels-last streams go through conv, pool, batch "
                            "norm, global mean, cat along channels and element-wise ops, so emit this graph without "
                            "channels_last (mase emit-verilog without --channels-last)",
                            n.name, n.op_name(), why));
  };
  if (const verilog::component* c = verilog::component_of(n); c != nullptr && c->channels_last) return;
  if (const auto* join = n.op.get_if<op::cat>()) {
    const std::int64_t dim = join->dim < 0 ? join->dim + 4 : join->dim;
    if (dim != 1) refuse(fmt::format("joins along dimension {}, not the channels", join->dim));
    for (std::size_t i = 0; i < n.inputs.size(); ++i)
      if (!is_stream_input(g, n, i)) refuse("joins a constant, whose table is in PyTorch's order");
    return;
  }
  refuse(fmt::format("({}) takes or gives a rank-4 stream", module));
}

MASE_COMPILED_INLINE std::int64_t hardware_batch(const graph& g) {
  for (node_id p : g.placeholders())
    if (const tensor_meta* t = entry_meta(g[p], "data_out_0"); t != nullptr && !t->shape.empty()) return t->shape[0];
  return 1;
}

MASE_COMPILED_INLINE std::int64_t per_sample(const shape& s, std::int64_t batch) {
  return batch == 1 || s.size() <= 1 ? s.numel() : s.numel() / s[0];
}

MASE_COMPILED_INLINE shape sample_shape(const shape& s, std::int64_t batch) {
  if (batch != 1) return s;
  require(s.size() < shape::max_rank, "add_hardware_metadata: a tensor of shape {} has no room for a batch dimension",
          to_string(s));
  shape out{1};
  for (std::int64_t d : s) out.push_back(d);
  return out;
}

MASE_COMPILED_INLINE std::int64_t sample_dim(std::int64_t dim, const shape& s, std::int64_t batch) {
  const std::int64_t d = dim < 0 ? dim + static_cast<std::int64_t>(s.size()) : dim;
  return batch == 1 ? d + 1 : d;
}

MASE_COMPILED_INLINE std::optional<beat_slice> slice_by_beats(const node& n, std::int64_t batch, std::int64_t lanes) {
  const auto* cut = n.op.get_if<op::slice>();
  if (cut == nullptr || lanes < 1) return std::nullopt;
  const shape& tensor_in = entry_meta(n, "data_in_0")->shape;
  const shape in = sample_shape(tensor_in, batch);
  const shape out = sample_shape(entry_meta(n, "data_out_0")->shape, batch);
  const std::int64_t d = sample_dim(cut->dim, tensor_in, batch);
  std::int64_t inner = 1;
  for (std::int64_t a = d + 1; a < static_cast<std::int64_t>(in.size()); ++a) inner *= in[a];
  const std::int64_t start = cut->first_index(in[d]);
  if ((cut->step != 1 && out[d] > 1) || out[d] == 0) return std::nullopt;
  const std::int64_t period = in[d] * inner, first = start * inner, kept = out[d] * inner;
  if (period % lanes != 0 || first % lanes != 0 || kept % lanes != 0) return std::nullopt;
  return beat_slice{.period = period / lanes, .first = first / lanes, .kept = kept / lanes};
}

MASE_COMPILED_INLINE bool sweeps_rows(const node& n) {
  if (const auto* conv = n.op.get_if<op::conv2d>()) return windows_read_one_channel(conv->in_channels, conv->groups, conv->out_channels);
  return n.is<op::max_pool2d>() || n.is<op::avg_pool2d>();
}

}  // namespace detail

MASE_COMPILED_INLINE bool detail::same_in_every_sample(const node& constant) {
  const auto value = constant.parameters.find("value");
  if (value == constant.parameters.end() || value->second.rank() == 0) return false;
  const std::span<const float> v = value->second.values();
  const std::size_t sample = v.size() / static_cast<std::size_t>(value->second.shape()[0]);
  for (std::size_t i = sample; i < v.size(); ++i)
    if (v[i] != v[i % sample]) return false;
  return true;
}

MASE_COMPILED_INLINE void detail::add_window_parameters(ordered_map<verilog_value>& params, const dims& kernel, const dims& stride,
                                                                            const dims& padding, const dims& dilation) {
  params.insert_or_assign("KERNEL_X", detail::window_dim(kernel, 1, 1));
  params.insert_or_assign("KERNEL_Y", detail::window_dim(kernel, 0, 1));
  params.insert_or_assign("STRIDE_X", detail::window_dim(stride, 1, 1));
  params.insert_or_assign("STRIDE_Y", detail::window_dim(stride, 0, 1));
  params.insert_or_assign("PADDING_X", detail::window_dim(padding, 1, 0));
  params.insert_or_assign("PADDING_Y", detail::window_dim(padding, 0, 0));
  params.insert_or_assign("DILATION_X", detail::window_dim(dilation, 1, 1));
  params.insert_or_assign("DILATION_Y", detail::window_dim(dilation, 0, 1));
}

}  // namespace mase
