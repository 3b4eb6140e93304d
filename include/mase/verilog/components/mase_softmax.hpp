#pragma once
// mase_softmax's descriptor: its SystemVerilog text (rtl/mase_softmax.hpp), its timing, the modules it
// needs, its cost and how an instance plans its ROMs and parameters (verilog/component.hpp).

#include <mase/verilog/stream_metadata.hpp>
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
  // exponentials read combinationally (distributed RAM or flip-flops), the exp table once per lane. The dividers are not in
  // the fitted logic model yet, so its LUTs and flip-flops are left out.
  const std::int64_t row = p("ROW_LENGTH");
  const eval::softmax_rule rule = eval::make_softmax_rule(x, out, row);
  c.cycles_per_sample = 3 * stream_cycles;
  const std::int64_t table = static_cast<std::int64_t>(rule.exp_table.size());
  c.memories.push_back({"row", in_lanes * x.width, row / in_lanes, 1, false, /*combinational_read=*/true});
  c.memories.push_back({"exponentials", in_lanes * (rule.exp_frac + 1), row / in_lanes, 1, false, true});
  c.memories.push_back({"exp table", rule.exp_frac + 1, table, in_lanes, true, true});
  c.modelled = false;
}

inline void plan_of_mase_softmax(const plan_context& ctx, instance_plan& plan) {
  const eval::softmax_rule& rule = *ctx.lowering_of().softmax_rows;
  plan.rom("exp", rule.exp_table, 1, rule.exp_frac + 1);
  plan.parameter("EXP_FRAC", rule.exp_frac);
  plan.parameter("EXP_TABLE_SIZE", static_cast<std::int64_t>(rule.exp_table.size()));
}

// add_hardware_metadata: its parameters beyond its streams', in MASE's names, and its result's lanes.
inline std::int64_t metadata_of_mase_softmax(const metadata_context& ctx) {
  const node& n = ctx.n;
  auto& params = ctx.h.verilog_param;
  const auto* soft = &n.as<op::softmax>();
  std::int64_t out_lanes = ctx.input_lanes(0);
  // Rows of the last dimension stream one after another, each a whole number of beats.
  const shape& in = mase::detail::entry_meta(n, "data_in_0")->shape;
  require(!in.empty() && (soft->dim == -1 || soft->dim == static_cast<std::int64_t>(in.size()) - 1),
          "add_hardware_metadata: node {} (softmax): the hardware normalizes over the last dimension; "
          "this one is over dimension {} of {}",
          n.name, soft->dim, in.size());
  require(in.back() % ctx.input_lanes(0) == 0,
          "add_hardware_metadata: node {} (softmax): its input arrives {} lanes wide, which does not "
          "divide its rows of {}; lower max_parallelism[0]",
          n.name, ctx.input_lanes(0), in.back());
  params.insert_or_assign("ROW_LENGTH", in.back());
  return out_lanes;
}

}  // namespace detail

namespace components {

// Waits for a whole row.
inline constexpr component mase_softmax{
    .module = rtl::mase_softmax.name,
    .text = rtl::mase_softmax,
    .timing = component_timing::sample,
    .metadata = detail::metadata_of_mase_softmax,
    .cost = detail::cost_of_mase_softmax,
    .plan = detail::plan_of_mase_softmax};

}  // namespace components

}  // namespace mase::verilog
