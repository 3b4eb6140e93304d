#pragma once
// mase_conv2d's descriptor: its SystemVerilog text (rtl/mase_conv2d.hpp), its timing, the modules it
// needs, its cost and how an instance plans its ROMs and parameters (verilog/component.hpp).

#include <mase/pass/add_hardware_metadata.hpp>
#include <mase/verilog/component.hpp>
#include <mase/eval/lowering.hpp>
#include <mase/verilog/layout.hpp>
#include <mase/verilog/cost.hpp>
#include <mase/verilog/rtl/mase_conv2d.hpp>
#include <mase/verilog/components/window_cost.hpp>

#include <algorithm>
#include <cstdint>
#include <string_view>

namespace mase::verilog {

namespace detail {

inline void cost_of_mase_conv2d(const cost_context& ctx, component_cost& c) { window_cost(ctx, c, true); }

inline void plan_of_mase_conv2d(const plan_context& ctx, instance_plan& plan) {
  const node& n = ctx.n;
  const auto p = [&](std::string_view key) { return param_int(n, key); };
  const eval::fixed_lowering& l = ctx.lowering_of();
  plan.parameter("ACCUMULATOR_WIDTH", l.accumulator_width);
  const std::int64_t lanes = p("DATA_OUT_0_PARALLELISM_DIM_0"), per_word = entries_per_rom_word(n);
  const std::int64_t group_channels = p("DATA_IN_0_TENSOR_SIZE_DIM_2") / p("GROUPS");
  plan.rom("weight",
           n.meta.hardware.channels_last
               ? channels_last_weight_order(l.weight_codes, p("DATA_OUT_0_TENSOR_SIZE_DIM_2"), group_channels,
                                            p("KERNEL_Y"), p("KERNEL_X"), lanes)
               : l.weight_codes,
           per_word, l.weight->width);
  if (l.bias) plan.rom("bias", l.aligned_bias, per_word, l.accumulator_width);
  plan.dot_product = true;
  plan.macs_per_sample = mase::detail::per_sample(mase::detail::entry_meta(n, "data_out_0")->shape, ctx.batch) *
                         group_channels * p("KERNEL_X") * p("KERNEL_Y");
  plan.multipliers = lanes;
}

}  // namespace detail

namespace components {

// The two-bank sample buffer; a line-buffered one (line_buffered) waits for rows and holds a
// few (the emitter's timing_of).
inline constexpr component mase_conv2d{
    .module = "mase_conv2d",
    .source = rtl::mase_conv2d,
    .timing = component_timing::sample,
    .sample_banks = 2,
    .needs = component_needs::conv,
    .channels_last = true,
    .cost = detail::cost_of_mase_conv2d,
    .plan = detail::plan_of_mase_conv2d};

}  // namespace components

}  // namespace mase::verilog
