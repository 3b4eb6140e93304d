#pragma once
// The hardware metadata pass (pass/add_hardware_metadata.hpp declares it): inline in the
// header-only mode, compiled once in mase::mase (src/passes.cpp) otherwise.

#include <mase/pass/add_hardware_metadata.hpp>
#include <mase/verilog/stream_metadata_definitions.hpp>

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
    h.dependence_files = component->component != nullptr ? hardware_dependence_files(*component->component)
                                                          : hardware_dependence_files(component->module);
    detail::check_channels_last_support(g, n);
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
      if (i == 0 && h.channels_last && (n.is<op::conv2d>() || detail::sweeps_rows(n)))
        // whole pixels a beat; one-channel windows read a beat's channels, so it is as wide as the output's
        in_lanes = detail::sweeps_rows(n) ? largest_divisor_at_most(detail::stream_innermost(n, "data_in_0"), stream_limit)
                                  : std::gcd(in_lanes, detail::stream_innermost(n, "data_in_0"));
      else if (i == 0 && detail::sweeps_rows(n))
        in_lanes = std::gcd(in_lanes, detail::innermost(n, "data_in_0"));  // whole rows a beat
      require(in_lanes > 0, "add_hardware_metadata: node {} ({}): input {} ({}) is not a stream",
                                        n.name, op, i, producer.name);
      require(per_sample(detail::entry_meta(n, data_in_name(i))->shape) % in_lanes == 0,
              "add_hardware_metadata: node {} ({}): input {} arrives {} lanes wide, which does not "
                          "divide its {} elements per sample; lower max_parallelism[0]",
                          n.name, op, i, in_lanes, per_sample(detail::entry_meta(n, data_in_name(i))->shape));
      detail::add_tensor_parameters(h.verilog_param, n, data_in_name(i), {in_lanes});
    }
    // The component's own parameters and its result's lanes (its descriptor, verilog/components/).
    std::int64_t out_lanes = input_lanes(0);
    if (const verilog::component* c = verilog::component_of(n); c != nullptr && c->metadata != nullptr)
      out_lanes = c->metadata({.g = g, .n = n, .h = h, .batch = batch, .stream_limit = stream_limit,
                               .tile_limit = tile_limit, .lanes = lanes});
    auto& params = h.verilog_param;
    const fixed_fmt out_fmt = detail::hardware_format(n, "data_out_0");
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

}  // namespace mase
