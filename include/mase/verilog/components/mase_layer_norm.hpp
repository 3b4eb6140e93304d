#pragma once
// mase_layer_norm's descriptor: its SystemVerilog text (rtl/mase_layer_norm.hpp), its timing, the modules it
// needs, and its cost (verilog/component.hpp).

#include <mase/pass/add_hardware_metadata.hpp>
#include <mase/verilog/component.hpp>
#include <mase/verilog/cost.hpp>
#include <mase/verilog/rtl/mase_layer_norm.hpp>
#include <mase/eval/mean_rule.hpp>

#include <algorithm>
#include <cstdint>
#include <string_view>

namespace mase::verilog {

namespace detail {

inline void cost_of_mase_layer_norm(const cost_context& ctx, component_cost& c) {
  const node& n = ctx.n;
  const auto p = [&](std::string_view key) { return param_int(n, key); };
  const fixed_fmt x = ctx.x, out = ctx.out;
  const std::int64_t in_elements = ctx.in_elements, in_lanes = ctx.in_lanes, stream_cycles = ctx.stream_cycles;
  // Load (the sums), the root (P + 2 cycles: V, then one bit of R per cycle) and emit, per
  // row. As softmax's, the logic is outside the fitted model; the row buffer is counted.
  const std::int64_t row = p("ROW_LENGTH"), rows = in_elements / row;
  const int reciprocal_bits = eval::normalization_reciprocal_bits(x, out, row);
  c.cycles_per_sample = 2 * stream_cycles + rows * (reciprocal_bits + 2);
  c.memories.push_back({"row", in_lanes * x.width, row / in_lanes, 1, false});
  c.modelled = false;
}

}  // namespace detail

namespace components {

// Waits for a whole row (its sums) before its first output.
inline constexpr component mase_layer_norm{
    .module = "mase_layer_norm",
    .source = rtl::mase_layer_norm,
    .timing = component_timing::sample,
    .needs = component_needs::cast,
    .cost = detail::cost_of_mase_layer_norm};

}  // namespace components

}  // namespace mase::verilog
