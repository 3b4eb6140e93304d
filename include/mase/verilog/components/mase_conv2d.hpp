#pragma once
// mase_conv2d's descriptor: its SystemVerilog text (rtl/mase_conv2d.hpp), its timing, the modules it
// needs, its cost and how an instance plans its ROMs and parameters (verilog/component.hpp).

#include <mase/verilog/stream_metadata.hpp>
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
  const std::int64_t lanes = p("DATA_OUT_0_PARALLELISM_DIM_0"), per_word = entries_per_rom_word(n, lanes);
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

// add_hardware_metadata: its parameters beyond its streams', in MASE's names, and its result's lanes.
inline std::int64_t metadata_of_mase_conv2d(const metadata_context& ctx) {
  const node& n = ctx.n;
  const std::int64_t stream_limit = ctx.stream_limit;
  auto& params = ctx.h.verilog_param;
  const auto* conv = &n.as<op::conv2d>();
  std::int64_t out_lanes = ctx.input_lanes(0);
  // Channels-last lanes are output channels: a beat's share one group (or, one-channel
  // windows, match the input's); otherwise output columns.
  out_lanes = largest_divisor_at_most(!ctx.h.channels_last ? mase::detail::innermost(n, "data_out_0")
                                      : mase::detail::sweeps_rows(n)       ? conv->out_channels
                                                             : conv->out_channels / conv->groups,
                                      stream_limit);
  params.insert_or_assign("CHANNELS_LAST", ctx.h.channels_last);
  mase::detail::add_tensor_parameters(params, n, "weight", {});
  if (conv->bias) mase::detail::add_tensor_parameters(params, n, "bias", {});
  mase::detail::add_window_parameters(params, conv->kernel_size, conv->stride, conv->padding, conv->dilation);
  params.insert_or_assign("GROUPS", conv->groups);
  params.insert_or_assign("HAS_BIAS", conv->bias);
  return out_lanes;
}

}  // namespace detail

namespace components {

// The two-bank sample buffer; a line-buffered one (line_buffered) waits for rows and holds a
// few (the emitter's timing_of).
inline constexpr component mase_conv2d{
    .module = rtl::mase_conv2d.name,
    .text = rtl::mase_conv2d,
    .timing = component_timing::sample,
    .sample_banks = 2,
    .needs = component_needs::conv,
    .channels_last = true,
    .window_sweep = true,
    .metadata = detail::metadata_of_mase_conv2d,
    .cost = detail::cost_of_mase_conv2d,
    .plan = detail::plan_of_mase_conv2d};

}  // namespace components

}  // namespace mase::verilog
