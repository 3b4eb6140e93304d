#pragma once
// mase_lut's descriptor: its SystemVerilog text (rtl/mase_lut.hpp), its timing, the modules it
// needs, its cost and how an instance plans its ROMs and parameters (verilog/component.hpp).

#include <mase/verilog/stream_metadata.hpp>
#include <mase/verilog/component.hpp>
#include <mase/eval/lowering.hpp>
#include <mase/verilog/cost.hpp>
#include <mase/verilog/rtl/mase_lut.hpp>

#include <algorithm>
#include <cstdint>
#include <string_view>

namespace mase::verilog {

namespace detail {

inline void cost_of_mase_lut(const cost_context& ctx, component_cost& c) {
  const fixed_fmt x = ctx.x, out = ctx.out;
  const std::int64_t in_lanes = ctx.in_lanes, stream_cycles = ctx.stream_cycles;
  c.cycles_per_sample = stream_cycles;
  c.memories.push_back({"table", out.width, std::int64_t{1} << x.width, in_lanes, true, /*combinational_read=*/true});
  c.register_bits = in_lanes * out.width;
}

inline void plan_of_mase_lut(const plan_context& ctx, instance_plan& plan) {
  const eval::fixed_lowering& l = ctx.lowering_of();
  plan.rom("lut", l.table, 1, l.output.width);
}

}  // namespace detail

namespace components {

inline constexpr component mase_lut{
    .module = rtl::mase_lut.name,
    .text = rtl::mase_lut,
    .channels_last = true,
    .cost = detail::cost_of_mase_lut,
    .plan = detail::plan_of_mase_lut};

}  // namespace components

}  // namespace mase::verilog
