#pragma once
// The hardware metadata pass (pass/add_hardware_metadata.hpp declares it): inline in the
// header-only mode, compiled once in mase::mase (src/passes.cpp) otherwise.

#include <mase/pass/add_hardware_metadata.hpp>

// A unit that links the compiled library (mase::mase) gets these from the library; defining them again here would
// break the link with duplicate symbols.
#if MASE_EXTERN_INSTANTIATIONS && !defined(MASE_DEFINE_COMPILED)
#error "this header holds definitions that the compiled library (mase::mase) provides; include <mase/pass/add_hardware_metadata.hpp> instead"
#endif

#include <mase/eval/mean_rule.hpp>
#include <mase/verilog/components.hpp>

#include <algorithm>
#include <array>
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

template <class... Ops>
std::string hardware_op_names(op_list<Ops...>, bool wired) {
  std::string names;
  const auto add = [&](const hardware_mapping* h, std::string_view name) {
    if (h != nullptr && h->wired_through() == wired) names += fmt::format("{}{}", names.empty() ? "" : ", ", name);
  };
  (add(hardware_of<Ops>(), Ops::name), ...);
  return names;
}

}  // namespace detail

MASE_COMPILED_INLINE std::vector<std::string> hardware_dependence_files(std::string_view module) {
  std::vector<std::string> files{fmt::format("{}.sv", module)};
  if (const verilog::component* c = verilog::find_component(module))
    for (std::string_view needed : c->needs) files.push_back(fmt::format("{}.sv", needed));
  return files;
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
  if (const verilog::component* c = verilog::find_component(module); c != nullptr && c->channels_last) return;
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

}  // namespace detail
// A conv or pool node that mase_window_sweep will give a ring of rows (windows_read_one_channel).
inline bool sweeps_rows(const node& n) {
  if (const auto* conv = n.op.get_if<op::conv2d>()) return windows_read_one_channel(conv->in_channels, conv->groups, conv->out_channels);
  return n.is<op::max_pool2d>() || n.is<op::avg_pool2d>();
}

MASE_COMPILED_INLINE void add_hardware_metadata_pass::run(graph& g) const {
  for (int p : options.max_parallelism)
    require(p >= 1, "add_hardware_metadata: max_parallelism entries must be at least 1 (got {})", p);
  std::vector<std::int64_t> lanes(g.id_bound(), 0);  // per node: lanes of its data_out_0 stream
  const std::int64_t stream_limit = options.max_parallelism[0], tile_limit = options.max_parallelism[1];
  const std::int64_t batch = detail::hardware_batch(g);
  const auto per_sample = [&](const shape& s) { return detail::per_sample(s, batch); };
  for (node_id id : g.order()) {
    node& n = g[id];
    hardware_meta& h = n.meta.hardware;
    h = hardware_meta{};
    h.max_parallelism = options.max_parallelism;
    h.device_id = 0;
    // Channels-last concerns the nodes that take or give a map (a rank-4 stream).
    h.channels_last = options.channels_last && detail::takes_or_gives_a_map(n);
    const std::string_view op = n.op_name();
    const auto input_lanes = [&](std::size_t i) { return lanes[n.inputs.at(i).index]; };

    if (n.is<op::placeholder>()) {
      h.is_implicit = true;
      lanes[id.index] = largest_divisor_at_most(detail::stream_innermost(n, "data_out_0"), stream_limit);
      continue;
    }
    if (n.is<op::output>() || n.is<op::constant>()) {
      h.is_implicit = true;
      continue;
    }
    if (is_implicit_in_hardware(n)) {
      // Wired through: the same elements in the same order, which a reshape of a channels-last
      // map keeps only where it has one pixel (flatten after global pooling).
      const tensor_meta* in = detail::entry_meta(n, "data_in_0");
      const tensor_meta* out = detail::entry_meta(n, "data_out_0");
      require(!detail::channels_last_entry(n, "data_in_0") || in->shape[2] * in->shape[3] == 1 ||
                  (out != nullptr && out->shape == in->shape),
              "add_hardware_metadata: node {} ({}) reshapes the channels-last map {} of {} pixels, whose "
              "stream order differs from PyTorch's; pool it to one pixel first, or emit without channels_last",
              n.name, op, to_string(in->shape), in->shape[2] * in->shape[3]);
      h.is_implicit = true;
      lanes[id.index] = input_lanes(0);
      continue;
    }
    const hardware_mapping* component = n.op.hardware();
    if (component == nullptr)
      throw error(fmt::format("add_hardware_metadata: node {} ({}) has no hardware component; the ops with one are "
                              "{} (and {} nodes, which are wired through)",
                              n.name, op, detail::hardware_op_names(builtin_ops{}, false),
                              detail::hardware_op_names(builtin_ops{}, true)));
    h.module = std::string(component->module);
    h.dependence_files = hardware_dependence_files(component->module);
    detail::check_channels_last_support(g, n);
    if (component->module == "mase_rescale") {
      const std::optional<fixed_fmt> scaled =
          mase::detail::exact_scale_format(g, n, format(detail::hardware_format(n, "data_in_0")));
      require(scaled.has_value() && format(*scaled) == detail::entry_meta(n, "data_out_0")->precision,
              "add_hardware_metadata: node {} ({}): the hardware divides only by a constant power of two, "
              "which keeps the codes and moves the point; this one divides by {}",
              n.name, op, g[n.inputs[1]].name);
    }
    // Checked before the result's format: without hardware_formats, quantize leaves a pool of a
    // divisor other than 2^a float.
    if (const auto* avgp = n.op.get_if<op::avg_pool2d>()) {
      const tensor_meta* result = detail::entry_meta(n, "data_out_0");
      require(result != nullptr && result->precision.holds<fixed_fmt>(),
              "add_hardware_metadata: node {} (avg_pool2d): its result has no fixed-point format; quantize gives "
              "one to a pool of fixed-point values whose divisor is a power of two, and to any other with "
              "quantize_config::hardware_formats (mase emit-verilog sets it)",
              n.name);
      const std::optional<eval::window_mean_rule> rules = eval::window_mean_rule_of(
          n, *avgp, detail::hardware_format(n, "data_in_0"), result->precision.get<fixed_fmt>());
      require(rules.has_value() && rules->uniform_divisor() > 0,
              "add_hardware_metadata: node {} (avg_pool2d): the hardware divides every window by one constant, "
              "but this pool's windows take {} divisors{}; use count_include_pad=True, no ceil_mode windows "
              "past the padding, or a divisor_override",
              n.name, rules ? rules->by_divisor.size() : 0, avgp->ceil_mode ? " (ceil_mode)" : "");
    }
    for (std::size_t i = 0; i < stream_input_count(n); ++i) {
      if (!is_stream_input(g, n, i)) continue;  // a constant operand: its table has the result's lanes
      const node& producer = g[n.inputs[i]];
      require(!(n.is<op::index_select>() && i == 0 && producer.is<op::constant>()),
              "add_hardware_metadata: node {} (index_select) looks up rows of the constant {}; raise it "
              "to an embedding (raise_granularity, mase --raise), which has hardware",
              n.name, producer.name);
      require(!producer.is<op::constant>(),
              "add_hardware_metadata: node {} ({}): input {} is the constant {}; hardware streams come "
                          "from graph inputs and components, so make it a parameter of the node",
                          n.name, op, i, producer.name);
      std::int64_t in_lanes = input_lanes(i);
      if (i == 0 && h.channels_last && (n.is<op::conv2d>() || sweeps_rows(n)))
        // whole pixels a beat; one-channel windows read a beat's channels, so it is as wide as the output's
        in_lanes = sweeps_rows(n) ? largest_divisor_at_most(detail::stream_innermost(n, "data_in_0"), stream_limit)
                                  : std::gcd(in_lanes, detail::stream_innermost(n, "data_in_0"));
      else if (i == 0 && sweeps_rows(n))
        in_lanes = std::gcd(in_lanes, detail::innermost(n, "data_in_0"));  // whole rows a beat
      require(in_lanes > 0, "add_hardware_metadata: node {} ({}): input {} ({}) is not a stream",
                                        n.name, op, i, producer.name);
      require(per_sample(detail::entry_meta(n, data_in_name(i))->shape) % in_lanes == 0,
              "add_hardware_metadata: node {} ({}): input {} arrives {} lanes wide, which does not "
                          "divide its {} elements per sample; lower max_parallelism[0]",
                          n.name, op, i, in_lanes, per_sample(detail::entry_meta(n, data_in_name(i))->shape));
      detail::add_tensor_parameters(h.verilog_param, n, data_in_name(i), {in_lanes});
    }
    auto& params = h.verilog_param;
    const fixed_fmt out_fmt = detail::hardware_format(n, "data_out_0");
    std::int64_t out_lanes = input_lanes(0);

    if (const auto* lin = n.op.get_if<op::linear>()) {
      const std::int64_t p0 = input_lanes(0);
      require(lin->in_features % p0 == 0,
              "add_hardware_metadata: node {} (linear): its input arrives {} lanes wide, which does not "
                          "divide in_features {}; lower max_parallelism[0]",
                          n.name, p0, lin->in_features);
      const std::int64_t p1 = largest_divisor_at_most(lin->out_features, tile_limit);
      out_lanes = p1;
      detail::add_tensor_parameters(params, n, "weight", {p0, p1});
      if (lin->bias) detail::add_tensor_parameters(params, n, "bias", {p1});
      params.insert_or_assign("HAS_BIAS", lin->bias);
    } else if (const auto* conv = n.op.get_if<op::conv2d>()) {
      // Channels-last lanes are output channels: a beat's share one group (or, one-channel
      // windows, match the input's); otherwise output columns.
      out_lanes = largest_divisor_at_most(!h.channels_last ? detail::innermost(n, "data_out_0")
                                          : sweeps_rows(n)       ? conv->out_channels
                                                                 : conv->out_channels / conv->groups,
                                          stream_limit);
      params.insert_or_assign("CHANNELS_LAST", h.channels_last);
      detail::add_tensor_parameters(params, n, "weight", {});
      if (conv->bias) detail::add_tensor_parameters(params, n, "bias", {});
      add_window_parameters(params, conv->kernel_size, conv->stride, conv->padding, conv->dilation);
      params.insert_or_assign("GROUPS", conv->groups);
      params.insert_or_assign("HAS_BIAS", conv->bias);
    } else if (const auto* maxp = n.op.get_if<op::max_pool2d>()) {
      // ceil_mode's windows past the padded input read the sweep's padding code, which never wins.
      require(detail::hardware_format(n, "data_in_0") == out_fmt,
              "add_hardware_metadata: node {} (max_pool2d): its input and result formats differ; a max "
                          "pool keeps its input's format",
                          n.name);
      out_lanes = largest_divisor_at_most(detail::stream_innermost(n, "data_out_0"), stream_limit);
      params.insert_or_assign("MODE", std::int64_t{0});
      params.insert_or_assign("CHANNELS_LAST", h.channels_last);
      add_window_parameters(params, maxp->kernel_size, maxp->stride.empty() ? maxp->kernel_size : maxp->stride,
                            maxp->padding, maxp->dilation);
    } else if (const auto* avgp = n.op.get_if<op::avg_pool2d>()) {  // its divisor checked above
      out_lanes = largest_divisor_at_most(detail::stream_innermost(n, "data_out_0"), stream_limit);
      params.insert_or_assign("MODE", std::int64_t{1});
      params.insert_or_assign("CHANNELS_LAST", h.channels_last);
      add_window_parameters(params, avgp->kernel_size, avgp->stride.empty() ? avgp->kernel_size : avgp->stride,
                            avgp->padding, dims{1});
    } else if (const auto* bn = n.op.get_if<op::batch_norm2d>()) {
      const shape& in = detail::entry_meta(n, "data_in_0")->shape;
      require(bn->affine && detail::entry_meta(n, "weight") != nullptr && detail::entry_meta(n, "bias") != nullptr,
              "add_hardware_metadata: node {} (batch_norm2d): the hardware applies a per-channel scale "
                          "and shift in the formats of weight and bias; quantize both (and keep affine=True)",
                          n.name);
      // A beat holds one channel's pixels, or (channels-last) one pixel's channels.
      const std::int64_t run = h.channels_last ? in[1] : in[2] * in[3];
      require(run % input_lanes(0) == 0,
              "add_hardware_metadata: node {} (batch_norm2d): {} lanes do not divide {} {}; lower max_parallelism[0]",
              n.name, input_lanes(0), run, h.channels_last ? "channels" : "elements of a channel");
      params.insert_or_assign("CHANNELS_LAST", h.channels_last);
      detail::add_tensor_parameters(params, n, "weight", {});
      detail::add_tensor_parameters(params, n, "bias", {});
    } else if (component->module == "mase_matmul") {
      // Matrix pairs stream one after another: A [..., M, K] and B [..., K, N] with the same
      // leading dimensions (the hardware does not broadcast).
      const shape& a = detail::entry_meta(n, "data_in_0")->shape;
      const shape& b = detail::entry_meta(n, "data_in_1")->shape;
      require(a.size() >= 2 && a.size() == b.size() && std::equal(a.begin(), a.end() - 2, b.begin()),
              "add_hardware_metadata: node {} ({}): the hardware multiplies matrix pairs of equal "
                          "leading dimensions ([..., M, K] · [..., K, N]); broadcast the operands first",
                          n.name, op);
      require(a.back() % input_lanes(0) == 0,
              "add_hardware_metadata: node {} ({}): its first input arrives {} lanes wide, which must "
              "divide K = {}; lower max_parallelism[0]",
              n.name, op, input_lanes(0), a.back());
      out_lanes = largest_divisor_at_most(b.back(), tile_limit);
      // B arrives at the output's lanes (the emitter converts it): a beat is one word of its
      // memories.
      params.insert_or_assign("DATA_IN_1_PARALLELISM_DIM_0", out_lanes);
    } else if (const auto* soft = n.op.get_if<op::softmax>()) {
      // Rows of the last dimension stream one after another, each a whole number of beats.
      const shape& in = detail::entry_meta(n, "data_in_0")->shape;
      require(!in.empty() && (soft->dim == -1 || soft->dim == static_cast<std::int64_t>(in.size()) - 1),
              "add_hardware_metadata: node {} (softmax): the hardware normalizes over the last dimension; "
              "this one is over dimension {} of {}",
              n.name, soft->dim, in.size());
      require(in.back() % input_lanes(0) == 0,
              "add_hardware_metadata: node {} (softmax): its input arrives {} lanes wide, which does not "
              "divide its rows of {}; lower max_parallelism[0]",
              n.name, input_lanes(0), in.back());
      params.insert_or_assign("ROW_LENGTH", in.back());
    } else if (component->module == "mase_permute") {
      // Each sample is buffered and read out reordered (permute) or gathered (index_select by
      // constant indices): one element per beat in, output beats as wide as the innermost
      // output dimension allows.
      const shape& in = detail::entry_meta(n, "data_in_0")->shape;
      if (const auto* perm = n.op.get_if<op::permute>())
        require(batch == 1 || (!perm->dims.empty() && (perm->dims[0] == 0 || perm->dims[0] == -static_cast<std::int64_t>(in.size()))),
                "add_hardware_metadata: node {} (permute): the hardware reorders each sample, so the batch "
                "dimension must stay first; this permute moves it (at batch 1 the whole tensor is one sample)",
                n.name);
      if (const auto* cut = n.op.get_if<op::slice>())
        require(detail::sample_dim(cut->dim, in, batch) > 0,
                "add_hardware_metadata: node {} (slice): the hardware gathers within each sample; this one "
                "slices the batch dimension",
                n.name);
      if (const auto* select = n.op.get_if<op::index_select>()) {
        require(detail::sample_dim(select->dim, in, batch) > 0,
                "add_hardware_metadata: node {} (index_select): the hardware gathers within each sample; this "
                "one selects along the batch dimension",
                n.name);
        require(g[n.inputs[1]].is<op::constant>(),
                "add_hardware_metadata: node {} (index_select): its indices {} are not a constant; the hardware "
                "gathers by indices fixed at emission",
                n.name, g[n.inputs[1]].name);
      }
      require(detail::hardware_format(n, "data_in_0") == out_fmt,
              "add_hardware_metadata: node {} ({}): its input and result formats differ; moving elements keeps "
              "their format",
              n.name, op);
      if (const std::optional<detail::beat_slice> kept = detail::slice_by_beats(n, batch, input_lanes(0))) {
        // Whole beats of contiguous positions: passed or dropped as they stream, nothing buffered.
        h.module = "mase_slice";
        h.dependence_files = hardware_dependence_files("mase_slice");
        params.insert_or_assign("PERIOD_BEATS", kept->period);
        params.insert_or_assign("FIRST_BEAT", kept->first);
        params.insert_or_assign("KEPT_BEATS", kept->kept);
      } else {
        params.insert_or_assign("DATA_IN_0_PARALLELISM_DIM_0", std::int64_t{1});
        params.insert_or_assign("SAMPLE_SIZE", per_sample(in));
        params.insert_or_assign("OUT_SAMPLE_SIZE", per_sample(detail::entry_meta(n, "data_out_0")->shape));
        out_lanes = largest_divisor_at_most(detail::innermost(n, "data_out_0"), stream_limit);
      }
    } else if (const auto* table = n.op.get_if<op::embedding>()) {
      // Rows of the ROM (the table in the result's format) stream out at the innermost
      // dimension's lanes.
      out_lanes = largest_divisor_at_most(table->embedding_dim, stream_limit);
      detail::add_tensor_parameters(params, n, "weight", {out_lanes});
      params.insert_or_assign("ROWS", table->num_embeddings);
      params.insert_or_assign("ROW_LENGTH", table->embedding_dim);
    } else if (component->module == "mase_layer_norm") {
      // Rows of the normalized (trailing) dimensions stream one after another.
      const auto* layer = n.op.get_if<op::layer_norm>();
      const dims& normalized = layer ? layer->normalized_shape : n.op.get_if<op::rms_norm>()->normalized_shape;
      std::int64_t row = 1;
      for (std::int64_t d : normalized) row *= d;
      require(row % input_lanes(0) == 0,
              "add_hardware_metadata: node {} ({}): its input arrives {} lanes wide, which does not divide "
              "its rows of {}; lower max_parallelism[0]",
              n.name, op, input_lanes(0), row);
      params.insert_or_assign("ROW_LENGTH", row);
      params.insert_or_assign("CENTRED", layer != nullptr);
      for (const char* role : {"weight", "bias"}) {
        const bool present = n.parameters.find(role) != n.parameters.end();
        if (present) detail::add_tensor_parameters(params, n, role, {input_lanes(0)});  // fixed point, or an error
        params.insert_or_assign(std::string(role) == "weight" ? "HAS_WEIGHT" : "HAS_BIAS", present);
      }
    } else if (component->module == "mase_mean") {
      // Runs of `count` consecutive values (a channel's plane) stream one after another; one mean
      // per run leaves on one lane.
      const std::int64_t count = eval::averaged_count(n);
      require(count > 0,
              "add_hardware_metadata: node {} ({}): the hardware averages trailing dimensions (global average "
              "pooling: mean over dims [2, 3] of [N, C, H, W], or an adaptive average pool to size 1); this "
              "node averages others",
              n.name, op);
      if (detail::channels_last_entry(n, "data_in_0")) {
        // Pixels of every channel in turn: a sum per channel, and a beat of means after the last pixel.
        const std::int64_t channels = detail::entry_meta(n, "data_in_0")->shape[1];
        require(channels % input_lanes(0) == 0,
                "add_hardware_metadata: node {} ({}): its input arrives {} lanes wide, which does not divide its "
                "{} channels; lower max_parallelism[0]",
                n.name, op, input_lanes(0), channels);
        params.insert_or_assign("CHANNELS", channels);
        out_lanes = input_lanes(0);
      } else {
        require(count % input_lanes(0) == 0,
                "add_hardware_metadata: node {} ({}): its input arrives {} lanes wide, which does not divide its "
                "runs of {} averaged values; lower max_parallelism[0]",
                n.name, op, input_lanes(0), count);
        out_lanes = 1;
      }
      params.insert_or_assign("COUNT", count);
      params.insert_or_assign("CHANNELS_LAST", detail::channels_last_entry(n, "data_in_0"));
    } else if (const auto* join = n.op.get_if<op::cat>()) {
      // Per index of the dimensions before the joined one (within the sample), a chunk of
      // operand 0 then one of operand 1, both at the result's lanes (the emitter converts a
      // stream); a constant operand is a table of its words.
      require(n.inputs.size() == 2,
              "add_hardware_metadata: node {} (cat): the hardware joins two operands; this one joins {} "
              "(split it into a chain of cats)",
              n.name, n.inputs.size());
      const shape& result = detail::entry_meta(n, "data_out_0")->shape;
      const std::int64_t d = detail::sample_dim(join->dim, result, batch);
      require(d > 0, "add_hardware_metadata: node {} (cat): the hardware joins within each sample; this one joins "
              "along the batch dimension", n.name);
      const shape result_sample = detail::sample_shape(result, batch);
      std::int64_t outer = 1;
      for (std::int64_t a = 1; a < d; ++a) outer *= result_sample[a];
      // channels-last, channels are innermost: a chunk of each per pixel (the support check allows dim 1 only)
      if (detail::channels_last_entry(n, "data_out_0")) outer = result[2] * result[3];
      std::array<std::int64_t, 2> chunk{};
      std::int64_t constant_input = -1;
      for (std::size_t i = 0; i < 2; ++i) {
        const shape& operand = detail::entry_meta(n, data_in_name(i))->shape;
        require(detail::hardware_format(n, data_in_name(i)) == out_fmt,
                "add_hardware_metadata: node {} (cat): its {} has format {} and its result {}; quantize the cat "
                "so that every input takes data_in's format",
                n.name, data_in_name(i), to_string(detail::entry_meta(n, data_in_name(i))->precision),
                to_string(detail::entry_meta(n, "data_out_0")->precision));
        chunk[i] = per_sample(operand) / outer;
        if (!is_stream_input(g, n, i)) {
          require(constant_input < 0, "add_hardware_metadata: node {} (cat): both operands are constants; fold "
                  "the node into a constant", n.name);
          require(batch == 1 || operand[0] == 1,
                  "add_hardware_metadata: node {} (cat): the constant {} has a batch of {}; the hardware repeats "
                  "one sample's constant", n.name, g[n.inputs[i]].name, operand[0]);
          constant_input = static_cast<std::int64_t>(i);
        }
      }
      out_lanes = largest_divisor_at_most(std::gcd(chunk[0], chunk[1]), stream_limit);
      for (std::size_t i = 0; i < 2; ++i) {
        if (static_cast<std::int64_t>(i) == constant_input) detail::add_tensor_parameters(params, n, data_in_name(i), {out_lanes});
        else params.insert_or_assign(fmt::format("DATA_IN_{}_PARALLELISM_DIM_0", i), out_lanes);
        params.insert_or_assign(fmt::format("CHUNK_{}_BEATS", i), chunk[i] / out_lanes);
      }
      params.insert_or_assign("CONSTANT_INPUT", constant_input);
      params.insert_or_assign("TABLE_BEATS", constant_input < 0 ? 1 : outer * chunk[static_cast<std::size_t>(constant_input)] / out_lanes);
    } else if (component->module == "mase_binary") {
      // The result streams at the lanes of the first input of its shape; another such stream is
      // converted to them by the emitter. A constant operand is a table of the result's lanes;
      // a smaller stream (PyTorch's broadcasting within a sample) is buffered and read per beat.
      const shape& result = detail::entry_meta(n, "data_out_0")->shape;
      std::int64_t constant_input = -1, broadcast_input = -1;
      out_lanes = 0;
      for (std::size_t i = 0; i < n.inputs.size(); ++i) {
        const shape& operand = detail::entry_meta(n, data_in_name(i))->shape;
        if (!is_stream_input(g, n, i)) {
          require(constant_input < 0, "add_hardware_metadata: node {} ({}): both operands are constants; fold "
                                      "the node into a constant",
                  n.name, op);
          require(operand.size() < result.size() || operand[0] == 1 || same_in_every_sample(g[n.inputs[i]]),
                  "add_hardware_metadata: node {} ({}): the constant {} differs from sample to sample (shape "
                  "{}); the hardware repeats one sample's constant",
                  n.name, op, g[n.inputs[i]].name, to_string(operand));
          constant_input = static_cast<std::int64_t>(i);
        } else if (operand == result) {
          if (out_lanes == 0) out_lanes = input_lanes(i);
        } else {
          require(broadcast_input < 0 && operand.size() == result.size() && operand[0] == result[0],
                  "add_hardware_metadata: node {} ({}): its operands {} and {} broadcast into {}; the hardware "
                  "broadcasts one stream of the result's rank within each sample into a stream of the result's "
                  "shape",
                  n.name, op, to_string(detail::entry_meta(n, "data_in_0")->shape),
                  to_string(detail::entry_meta(n, "data_in_1")->shape), to_string(result));
          broadcast_input = static_cast<std::int64_t>(i);
        }
      }
      require(out_lanes > 0,
              "add_hardware_metadata: node {} ({}): no operand is a stream of the result's shape {}; the "
              "hardware streams the result at such an operand's pace",
              n.name, op, to_string(result));
      for (std::size_t i = 0; i < n.inputs.size(); ++i) {
        const auto k = static_cast<std::int64_t>(i);
        if (k == constant_input) detail::add_tensor_parameters(params, n, data_in_name(i), {out_lanes});
        else
          params.insert_or_assign(fmt::format("DATA_IN_{}_PARALLELISM_DIM_0", i),
                                  k == broadcast_input ? std::int64_t{1} : out_lanes);
      }
      params.insert_or_assign("OPERATION", std::int64_t{op == "add" ? 0 : op == "sub" ? 1 : 2});
      params.insert_or_assign("CONSTANT_INPUT", constant_input);
      params.insert_or_assign("BROADCAST_INPUT", broadcast_input);
      params.insert_or_assign("SAMPLE_BEATS", per_sample(result) / out_lanes);
      if (broadcast_input >= 0)
        params.insert_or_assign("BROADCAST_SIZE",
                                per_sample(detail::entry_meta(n, data_in_name(static_cast<std::size_t>(broadcast_input)))->shape));
    }
    for (const auto& [role, value] : n.parameters) {
      (void)value;
      h.interface.insert_or_assign(role, interface_entry{});
    }
    detail::add_tensor_parameters(params, n, "data_out_0", {out_lanes});
    params.insert_or_assign("OUT_SYMMETRIC", out_fmt.ovf == overflow::saturate_symmetric);
    n.op.hardware_parameters(n, h);  // a user's op: its component's own parameters
    lanes[id.index] = out_lanes;
  }
}

MASE_COMPILED_INLINE bool add_hardware_metadata_pass::same_in_every_sample(const node& constant) {
  const auto value = constant.parameters.find("value");
  if (value == constant.parameters.end() || value->second.rank() == 0) return false;
  const std::span<const float> v = value->second.values();
  const std::size_t sample = v.size() / static_cast<std::size_t>(value->second.shape()[0]);
  for (std::size_t i = sample; i < v.size(); ++i)
    if (v[i] != v[i % sample]) return false;
  return true;
}

MASE_COMPILED_INLINE void add_hardware_metadata_pass::add_window_parameters(ordered_map<verilog_value>& params, const dims& kernel, const dims& stride,
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
