#pragma once
// mase_softmax's descriptor: its SystemVerilog text (rtl/mase_softmax.hpp), its timing, the modules it
// needs, its cost and how an instance plans its ROMs and parameters (verilog/component.hpp).

#include <mase/pass/add_hardware_metadata.hpp>
#include <mase/verilog/component.hpp>
#include <mase/eval/lowering.hpp>
#include <mase/verilog/cost.hpp>
#include <mase/verilog/rtl/mase_softmax.hpp>
#include <mase/eval/mean_rule.hpp>

#include <algorithm>
#include <cstdint>
#include <string_view>

namespace mase::verilog {

namespace detail {

inline void cost_of_mase_softmax(const cost_context& ctx, component_cost& c) {
  const node& n = ctx.n;
  const auto p = [&](std::string_view key) { return param_int(n, key); };
  const fixed_fmt x = ctx.x, out = ctx.out;
  const std::int64_t in_lanes = ctx.in_lanes, stream_cycles = ctx.stream_cycles;
  // Three passes over each row's beats (load, exponentiate, emit); the row and its
  // exponentials held in distributed RAM, the exp table once per lane. The dividers are not in
  // the fitted logic model yet, so its LUTs and flip-flops are left out.
  const std::int64_t row = p("ROW_LENGTH");
  const eval::softmax_rule rule = eval::make_softmax_rule(x, out, row);
  c.cycles_per_sample = 3 * stream_cycles;
  c.memories.push_back({"row", in_lanes * x.width, row / in_lanes, 1, false});
  c.memories.push_back({"exponentials", in_lanes * (rule.exp_frac + 1), row / in_lanes, 1, false});
  c.memories.push_back({"exp table", rule.exp_frac + 1, static_cast<std::int64_t>(rule.exp_table.size()), in_lanes, true});
  c.modelled = false;
}

inline void plan_of_mase_softmax(const plan_context& ctx, instance_plan& plan) {
  const eval::softmax_rule& rule = *ctx.lowering_of().softmax_rows;
  plan.rom("exp", rule.exp_table, 1, rule.exp_frac + 1);
  plan.parameter("EXP_FRAC", rule.exp_frac);
  plan.parameter("EXP_TABLE_SIZE", static_cast<std::int64_t>(rule.exp_table.size()));
}

}  // namespace detail

namespace components {

// Waits for a whole row.
inline constexpr component mase_softmax{
    .module = "mase_softmax",
    .source = rtl::mase_softmax,
    .timing = component_timing::sample,
    .cost = detail::cost_of_mase_softmax,
    .plan = detail::plan_of_mase_softmax};

}  // namespace components

}  // namespace mase::verilog
