#pragma once
// mase_mean's descriptor: its SystemVerilog text (rtl/mase_mean.hpp), its timing, the modules it
// needs, its cost and how an instance plans its ROMs and parameters (verilog/component.hpp).

#include <mase/pass/add_hardware_metadata.hpp>
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
    c.memories.push_back({"channel sums", in_lanes * rule.sum_width, p("CHANNELS") / in_lanes, 1, false});
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

}  // namespace detail

namespace components {

// Waits for a whole run.
inline constexpr component mase_mean{
    .module = "mase_mean",
    .source = rtl::mase_mean,
    .timing = component_timing::sample,
    .needs = component_needs::mean,
    .channels_last = true,
    .cost = detail::cost_of_mase_mean,
    .plan = detail::plan_of_mase_mean};

}  // namespace components

}  // namespace mase::verilog
