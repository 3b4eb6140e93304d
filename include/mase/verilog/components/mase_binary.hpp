#pragma once
// mase_binary's descriptor: its SystemVerilog text (rtl/mase_binary.hpp), its timing, the modules it
// needs, its cost and how an instance plans its ROMs and parameters (verilog/component.hpp).

#include <mase/verilog/stream_metadata.hpp>
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
    c.memories.push_back({"broadcast banks", (broadcast == 0 ? x : y).width, 2 * size, out_lanes, false,
                          /*combinational_read=*/true});
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

// add_hardware_metadata: its parameters beyond its streams', in MASE's names, and its result's lanes.
inline std::int64_t metadata_of_mase_binary(const metadata_context& ctx) {
  const node& n = ctx.n;
  const graph& g = ctx.g;
  const std::string_view op = n.op_name();
  auto& params = ctx.h.verilog_param;
  const auto per_sample = [&](const shape& s) { return mase::detail::per_sample(s, ctx.batch); };
  std::int64_t out_lanes = ctx.input_lanes(0);
  // The result streams at the lanes of the first input of its shape; another such stream is
  // converted to them by the emitter. A constant operand is a table of the result's lanes;
  // a smaller stream (PyTorch's broadcasting within a sample) is buffered and read per beat.
  const shape& result = mase::detail::entry_meta(n, "data_out_0")->shape;
  std::int64_t constant_input = -1, broadcast_input = -1;
  out_lanes = 0;
  for (std::size_t i = 0; i < n.inputs.size(); ++i) {
    const shape& operand = mase::detail::entry_meta(n, data_in_name(i))->shape;
    if (!is_stream_input(g, n, i)) {
      require(constant_input < 0, "add_hardware_metadata: node {} ({}): both operands are constants; fold "
                                  "the node into a constant",
              n.name, op);
      require(operand.size() < result.size() || operand[0] == 1 || mase::detail::same_in_every_sample(g[n.inputs[i]]),
              "add_hardware_metadata: node {} ({}): the constant {} differs from sample to sample (shape "
              "{}); the hardware repeats one sample's constant",
              n.name, op, g[n.inputs[i]].name, to_string(operand));
      constant_input = static_cast<std::int64_t>(i);
    } else if (operand == result) {
      if (out_lanes == 0) out_lanes = ctx.input_lanes(i);
    } else {
      require(broadcast_input < 0 && operand.size() == result.size() && operand[0] == result[0],
              "add_hardware_metadata: node {} ({}): its operands {} and {} broadcast into {}; the hardware "
              "broadcasts one stream of the result's rank within each sample into a stream of the result's "
              "shape",
              n.name, op, to_string(mase::detail::entry_meta(n, "data_in_0")->shape),
              to_string(mase::detail::entry_meta(n, "data_in_1")->shape), to_string(result));
      broadcast_input = static_cast<std::int64_t>(i);
    }
  }
  require(out_lanes > 0,
          "add_hardware_metadata: node {} ({}): no operand is a stream of the result's shape {}; the "
          "hardware streams the result at such an operand's pace",
          n.name, op, to_string(result));
  for (std::size_t i = 0; i < n.inputs.size(); ++i) {
    const auto k = static_cast<std::int64_t>(i);
    if (k == constant_input) mase::detail::add_tensor_parameters(params, n, data_in_name(i), {out_lanes});
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
                            per_sample(mase::detail::entry_meta(n, data_in_name(static_cast<std::size_t>(broadcast_input)))->shape));
  return out_lanes;
}

}  // namespace detail

namespace components {

// A broadcast operand is banked whole before the first output.
inline constexpr component mase_binary{
    .module = rtl::mase_binary.name,
    .text = rtl::mase_binary,
    .timing = component_timing::sample,
    .needs = component_needs::cast,
    .channels_last = true,
    .metadata = detail::metadata_of_mase_binary,
    .cost = detail::cost_of_mase_binary,
    .plan = detail::plan_of_mase_binary};

}  // namespace components

}  // namespace mase::verilog
