#pragma once
// mase_mean's descriptor: its SystemVerilog text (rtl/mase_mean.hpp), its timing, the modules it
// needs, its cost and how an instance plans its ROMs and parameters (verilog/component.hpp).

#include <mase/verilog/stream_metadata.hpp>
#include <mase/verilog/component.hpp>
#include <mase/eval/lowering.hpp>
#include <mase/verilog/components/divide.hpp>
#include <mase/verilog/cost.hpp>
#include <mase/verilog/rtl/mase_mean.hpp>
#include <mase/eval/mean_rule.hpp>

#include <algorithm>
#include <cstdint>
#include <string_view>

namespace mase::verilog {

namespace detail {

inline void cost_of_mase_mean(const cost_context& ctx, component_cost& c) {
  const node& n = ctx.n;
  const auto p = [&](std::string_view key) { return param_int(n, key); };
  const fixed_fmt x = ctx.x, out = ctx.out;
  const std::int64_t in_lanes = ctx.in_lanes, stream_cycles = ctx.stream_cycles;
  // A beat per cycle into the run's sum; one constant multiply per run (eval/mean_rule.hpp).
  const eval::mean_rule rule = eval::make_mean_rule(x, out, p("COUNT"));
  c.cycles_per_sample = stream_cycles;
  if (n.meta.hardware.channels_last) {
    // a sum per channel in a table of beats of them, and a multiply per lane at the last pixel
    c.multipliers.push_back({in_lanes, rule.numerator_width(), rule.multiplier_width()});
    c.memories.push_back({"channel sums", in_lanes * rule.sum_width, p("CHANNELS") / in_lanes, 1, false,
                          /*combinational_read=*/true});
    c.register_bits = in_lanes * out.width;
  } else {
    c.multipliers.push_back({1, rule.numerator_width(), rule.multiplier_width()});
    c.register_bits = 2 * rule.sum_width + out.width;
  }
  c.adder_bits = in_lanes * rule.sum_width;
  c.modelled = false;  // not in the fitted logic model yet
}

inline void plan_of_mase_mean(const plan_context& ctx, instance_plan& plan) {
  const eval::mean_rule& rule = *ctx.lowering_of().mean_runs;
  plan.parameter("SUM_WIDTH", rule.sum_width);
  add_divide_parameters(plan, rule);
}

// add_hardware_metadata: its parameters beyond its streams', in MASE's names, and its result's lanes.
inline std::int64_t metadata_of_mase_mean(const metadata_context& ctx) {
  const node& n = ctx.n;
  const std::string_view op = n.op_name();
  auto& params = ctx.h.verilog_param;
  std::int64_t out_lanes = ctx.input_lanes(0);
  // Runs of `count` consecutive values (a channel's plane) stream one after another; one mean
  // per run leaves on one lane.
  const std::int64_t count = eval::averaged_count(n);
  require(count > 0,
          "add_hardware_metadata: node {} ({}): the hardware averages trailing dimensions (global average "
          "pooling: mean over dims [2, 3] of [N, C, H, W], or an adaptive average pool to size 1); this "
          "node averages others",
          n.name, op);
  if (mase::detail::channels_last_entry(n, "data_in_0")) {
    // Pixels of every channel in turn: a sum per channel, and a beat of means after the last pixel.
    const std::int64_t channels = mase::detail::entry_meta(n, "data_in_0")->shape[1];
    require(channels % ctx.input_lanes(0) == 0,
            "add_hardware_metadata: node {} ({}): its input arrives {} lanes wide, which does not divide its "
            "{} channels; lower max_parallelism[0]",
            n.name, op, ctx.input_lanes(0), channels);
    params.insert_or_assign("CHANNELS", channels);
    out_lanes = ctx.input_lanes(0);
  } else {
    require(count % ctx.input_lanes(0) == 0,
            "add_hardware_metadata: node {} ({}): its input arrives {} lanes wide, which does not divide its "
            "runs of {} averaged values; lower max_parallelism[0]",
            n.name, op, ctx.input_lanes(0), count);
    out_lanes = 1;
  }
  params.insert_or_assign("COUNT", count);
  params.insert_or_assign("CHANNELS_LAST", mase::detail::channels_last_entry(n, "data_in_0"));
  return out_lanes;
}

}  // namespace detail

namespace components {

// Waits for a whole run.
inline constexpr component mase_mean{
    .module = rtl::mase_mean.name,
    .text = rtl::mase_mean,
    .timing = component_timing::sample,
    .needs = component_needs::mean,
    .channels_last = true,
    .metadata = detail::metadata_of_mase_mean,
    .cost = detail::cost_of_mase_mean,
    .plan = detail::plan_of_mase_mean};

}  // namespace components

}  // namespace mase::verilog
