#pragma once
// The hardware cost model's walk over a graph (verilog/cost.hpp declares it and states the model):
// inline in the header-only mode, compiled once in mase::mase (src/verilog.cpp) otherwise.

#include <mase/verilog/stream_metadata.hpp>
#include <mase/verilog/components.hpp>
#include <mase/verilog/cost.hpp>

// A unit that links the compiled library (mase::mase) gets these from the library; defining them again here would
// break the link with duplicate symbols.
#if MASE_EXTERN_INSTANTIATIONS && !defined(MASE_DEFINE_COMPILED)
#error "this header holds definitions that the compiled library (mase::mase) provides; include <mase/verilog/cost.hpp> instead"
#endif

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include <fmt/core.h>

namespace mase::verilog {

namespace detail {

MASE_COMPILED_INLINE cost_context make_cost_context(const node& n, std::int64_t batch) {
  using mase::detail::entry_meta;
  using mase::detail::hardware_format;
  cost_context ctx{.n = n, .batch = batch, .x = hardware_format(n, "data_in_0"), .out = hardware_format(n, "data_out_0")};
  ctx.in_elements = mase::detail::per_sample(entry_meta(n, "data_in_0")->shape, batch);
  ctx.in_lanes = param_int(n, "DATA_IN_0_PARALLELISM_DIM_0");
  ctx.out_lanes = param_int(n, "DATA_OUT_0_PARALLELISM_DIM_0");
  ctx.stream_cycles = ctx.in_elements / ctx.in_lanes;
  return ctx;
}

MASE_COMPILED_INLINE component_cost component_cost_of(const node& n, std::int64_t batch) {
  const cost_context ctx = make_cost_context(n, batch);
  component_cost c{.node = n.name, .module = *n.meta.hardware.module};
  if (const component* descriptor = component_of(n); descriptor != nullptr && descriptor->cost != nullptr) {
    descriptor->cost(ctx, c);
  } else {  // a user's module without a descriptor: its pace is its input stream's, its structure unknown
    c.cycles_per_sample = ctx.stream_cycles;
    c.modelled = false;
  }
  return c;
}

}  // namespace detail

MASE_COMPILED_INLINE hardware_cost estimate_hardware_cost(const graph& g, const target& t) {
  hardware_cost cost{.target = std::string(t.name)};
  const std::int64_t batch = mase::detail::hardware_batch(g);
  for (node_id id : g.order()) {
    const node& n = g[id];
    if (n.is<op::placeholder>()) {
      const std::int64_t elements = mase::detail::per_sample(mase::detail::entry_meta(n, "data_out_0")->shape, batch);
      const std::int64_t lanes = mase::detail::stream_innermost(n, "data_out_0");
      const std::int64_t stream_lanes = largest_divisor_at_most(lanes, n.meta.hardware.max_parallelism[0]);
      const std::int64_t beats = elements / stream_lanes;
      if (beats > cost.cycles_per_sample) cost.cycles_per_sample = beats, cost.bottleneck = n.name;
      continue;
    }
    if (n.meta.hardware.is_implicit || !n.meta.hardware.module) continue;
    component_cost c = detail::component_cost_of(n, batch);
    if (c.cycles_per_sample > cost.cycles_per_sample) cost.cycles_per_sample = c.cycles_per_sample, cost.bottleneck = n.name;
    cost.components.push_back(std::move(c));
  }
  cost.resources = mapping::resources_of(cost.components, t.cost);
  return cost;
}

}  // namespace mase::verilog
