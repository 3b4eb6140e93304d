#pragma once
// mase_binary's descriptor: its SystemVerilog text (rtl/mase_binary.hpp), its timing, the modules it
// needs, and its cost (verilog/component.hpp).

#include <mase/pass/add_hardware_metadata.hpp>
#include <mase/verilog/component.hpp>
#include <mase/verilog/cost.hpp>
#include <mase/verilog/rtl/mase_binary.hpp>

#include <algorithm>
#include <cstdint>
#include <string_view>

namespace mase::verilog {

namespace detail {

inline void cost_of_mase_binary(const cost_context& ctx, component_cost& c) {
  using mase::detail::hardware_format;
  const node& n = ctx.n;
  const auto p = [&](std::string_view key) { return param_int(n, key); };
  const fixed_fmt x = ctx.x, out = ctx.out;
  const std::int64_t out_lanes = ctx.out_lanes;
  // At the result's pace; a constant operand's table, or a broadcast operand's order table and
  // its two banks (read at every lane).
  const fixed_fmt y = hardware_format(n, "data_in_1");
  const int exact = std::max(x.width - x.frac, y.width - y.frac) + std::max(x.frac, y.frac) + 1;
  const std::int64_t beats = p("SAMPLE_BEATS"), constant = p("CONSTANT_INPUT"), broadcast = p("BROADCAST_INPUT");
  c.cycles_per_sample = beats;
  if (constant >= 0)
    c.memories.push_back({"constant", out_lanes * (constant == 0 ? x : y).width, beats, 1, true});
  if (broadcast >= 0) {
    const std::int64_t size = p("BROADCAST_SIZE");
    c.memories.push_back({"order", out_lanes * bits_for(size), beats, 1, true});
    c.memories.push_back({"broadcast banks", (broadcast == 0 ? x : y).width, 2 * size, out_lanes, false});
  }
  if (p("OPERATION") == 2) c.multipliers.push_back({out_lanes, x.width, y.width});
  else c.adder_bits = out_lanes * exact;
  c.register_bits = out_lanes * out.width;
  c.select_bits = out_lanes * out.width;
}

}  // namespace detail

namespace components {

// A broadcast operand is banked whole before the first output.
inline constexpr component mase_binary{
    .module = "mase_binary",
    .source = rtl::mase_binary,
    .timing = component_timing::sample,
    .needs = component_needs::cast,
    .channels_last = true,
    .cost = detail::cost_of_mase_binary};

}  // namespace components

}  // namespace mase::verilog
