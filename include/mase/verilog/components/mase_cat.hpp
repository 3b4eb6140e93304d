#pragma once
// mase_cat's descriptor: its SystemVerilog text (rtl/mase_cat.hpp), its timing, the modules it
// needs, its cost and how an instance plans its ROMs and parameters (verilog/component.hpp).

#include <mase/pass/add_hardware_metadata.hpp>
#include <mase/verilog/component.hpp>
#include <mase/eval/lowering.hpp>
#include <mase/eval/fixed_rules.hpp>
#include <mase/verilog/cost.hpp>
#include <mase/verilog/rtl/mase_cat.hpp>

#include <algorithm>
#include <cstdint>
#include <string_view>

namespace mase::verilog {

namespace detail {

inline void cost_of_mase_cat(const cost_context& ctx, component_cost& c) {
  using mase::detail::entry_meta;
  const node& n = ctx.n;
  const auto p = [&](std::string_view key) { return param_int(n, key); };
  const fixed_fmt out = ctx.out;
  const std::int64_t out_lanes = ctx.out_lanes;
  const auto per_sample = [&](const shape& s) { return mase::detail::per_sample(s, ctx.batch); };
  // A beat of one operand or the other per cycle; a constant operand's table.
  c.cycles_per_sample = per_sample(entry_meta(n, "data_out_0")->shape) / out_lanes;
  if (p("CONSTANT_INPUT") >= 0) c.memories.push_back({"constant", out_lanes * out.width, p("TABLE_BEATS"), 1, true});
  c.register_bits = out_lanes * out.width;
  c.select_bits = out_lanes * out.width;
  c.modelled = false;  // not in the fitted logic model yet
}

inline void plan_of_mase_cat(const plan_context& ctx, instance_plan& plan) {
  // The constant operand's codes for one sample, in order (it repeats in every sample).
  const node& n = ctx.n;
  if (param_int(n, "CONSTANT_INPUT") < 0) return;
  const auto operand = static_cast<std::size_t>(param_int(n, "CONSTANT_INPUT"));
  const fixed_fmt f = mase::detail::hardware_format(n, data_in_name(operand));
  const tensor& values = ctx.constant_operand(operand);
  const std::int64_t lanes = param_int(n, "DATA_OUT_0_PARALLELISM_DIM_0");
  std::vector<std::int64_t> codes(static_cast<std::size_t>(param_int(n, "TABLE_BEATS") * lanes));
  for (std::size_t i = 0; i < codes.size(); ++i) codes[i] = eval::raw_of(values.data()[i], f.frac);
  plan.rom("table", std::move(codes), lanes, f.width);
}

}  // namespace detail

namespace components {

// All of input 0 first. Channels-last only along the channels (the planner checks the dimension).
inline constexpr component mase_cat{
    .module = "mase_cat",
    .source = rtl::mase_cat,
    .timing = component_timing::sample,
    .exact_by_formats = true,
    .cost = detail::cost_of_mase_cat,
    .plan = detail::plan_of_mase_cat};

}  // namespace components

}  // namespace mase::verilog
