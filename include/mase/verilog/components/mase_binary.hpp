#pragma once
// mase_binary's descriptor: its SystemVerilog text (rtl/mase_binary.hpp), its timing, the modules it
// needs, its cost and how an instance plans its ROMs and parameters (verilog/component.hpp).

#include <mase/pass/add_hardware_metadata.hpp>
#include <mase/verilog/component.hpp>
#include <mase/eval/lowering.hpp>
#include <mase/verilog/layout.hpp>
#include <mase/eval/fixed_rules.hpp>
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

inline void plan_of_mase_binary(const plan_context& ctx, instance_plan& plan) {
  using mase::detail::channels_last_entry;
  using mase::detail::entry_meta;
  const node& n = ctx.n;
  const auto p = [&](std::string_view key) { return param_int(n, key); };
  const std::int64_t lanes = p("DATA_OUT_0_PARALLELISM_DIM_0");
  if (p("OPERATION") == 2) plan.multipliers = lanes;
  // The table: a constant operand's codes, or a broadcast operand's read positions, for every
  // beat of a sample in the result's order.
  const bool constant = p("CONSTANT_INPUT") >= 0;
  if (!constant && p("BROADCAST_INPUT") < 0) return;
  const auto operand = static_cast<std::size_t>(p(constant ? "CONSTANT_INPUT" : "BROADCAST_INPUT"));
  std::vector<std::int64_t> order = broadcast_order(mase::detail::sample_shape(entry_meta(n, "data_out_0")->shape, ctx.batch),
                                                    entry_meta(n, data_in_name(operand))->shape);
  if (channels_last_entry(n, "data_out_0")) {
    // The result streams pixel by pixel, and so does a broadcast map: its positions too.
    const shape& result = entry_meta(n, "data_out_0")->shape;
    order = to_channels_last<std::int64_t>(order, result[1], result[2], result[3]);
    if (!constant && channels_last_entry(n, data_in_name(operand))) {
      const shape& map = entry_meta(n, data_in_name(operand))->shape;
      const std::int64_t plane = map[2] * map[3];
      for (std::int64_t& position : order) position = position % plane * map[1] + position / plane;
    }
  }
  int width = constant ? 0 : bits_for(p("BROADCAST_SIZE"));
  if (constant) {
    const fixed_fmt f = mase::detail::hardware_format(n, data_in_name(operand));
    const tensor& values = ctx.constant_operand(operand);
    for (std::int64_t& v : order) v = eval::raw_of(values.data()[v], f.frac);
    width = f.width;
  }
  plan.rom("table", std::move(order), lanes, width);
  plan.parameter("TABLE_WIDTH", width);
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
    .cost = detail::cost_of_mase_binary,
    .plan = detail::plan_of_mase_binary};

}  // namespace components

}  // namespace mase::verilog
