#pragma once
// mase_batch_norm's descriptor: its SystemVerilog text (rtl/mase_batch_norm.hpp), its timing, the modules it
// needs, its cost and how an instance plans its ROMs and parameters (verilog/component.hpp).

#include <mase/pass/add_hardware_metadata.hpp>
#include <mase/verilog/component.hpp>
#include <mase/eval/lowering.hpp>
#include <mase/verilog/cost.hpp>
#include <mase/verilog/rtl/mase_batch_norm.hpp>
#include <mase/eval/mean_rule.hpp>

#include <algorithm>
#include <cstdint>
#include <string_view>

namespace mase::verilog {

namespace detail {

inline void cost_of_mase_batch_norm(const cost_context& ctx, component_cost& c) {
  using mase::detail::hardware_format;
  const node& n = ctx.n;
  const auto p = [&](std::string_view key) { return param_int(n, key); };
  const fixed_fmt x = ctx.x, out = ctx.out;
  const std::int64_t in_lanes = ctx.in_lanes, stream_cycles = ctx.stream_cycles;
  const fixed_fmt w = hardware_format(n, "weight"), b = hardware_format(n, "bias");
  const int acc = eval::linear_accumulator_width(x, w, 1, b);
  const std::int64_t channels = p("DATA_IN_0_TENSOR_SIZE_DIM_2");
  c.cycles_per_sample = stream_cycles;
  c.multipliers.push_back({in_lanes, x.width, w.width});
  const std::int64_t per_word = entries_per_rom_word(n, param_int(n, "DATA_IN_0_PARALLELISM_DIM_0"));
  c.memories.push_back({"scale", per_word * w.width, channels / per_word, 1, true});
  c.memories.push_back({"shift", per_word * acc, channels / per_word, 1, true});
  c.register_bits = in_lanes * out.width + w.width + acc;
  c.adder_bits = in_lanes * acc;
  c.select_bits = in_lanes * out.width;
}

inline void plan_of_mase_batch_norm(const plan_context& ctx, instance_plan& plan) {
  const node& n = ctx.n;
  const eval::fixed_lowering& l = ctx.lowering_of();
  plan.parameter("ACCUMULATOR_WIDTH", l.accumulator_width);
  const std::int64_t per_word = entries_per_rom_word(n, param_int(n, "DATA_IN_0_PARALLELISM_DIM_0"));
  plan.rom("scale", l.weight_codes, per_word, l.weight->width);
  plan.rom("shift", l.aligned_bias, per_word, l.accumulator_width);
  plan.multipliers = param_int(n, "DATA_IN_0_PARALLELISM_DIM_0");
}

// add_hardware_metadata: its parameters beyond its streams', in MASE's names, and its result's lanes.
inline std::int64_t metadata_of_mase_batch_norm(const metadata_context& ctx) {
  const node& n = ctx.n;
  auto& params = ctx.h.verilog_param;
  const auto* bn = &n.as<op::batch_norm2d>();
  std::int64_t out_lanes = ctx.input_lanes(0);
  const shape& in = mase::detail::entry_meta(n, "data_in_0")->shape;
  require(bn->affine && mase::detail::entry_meta(n, "weight") != nullptr && mase::detail::entry_meta(n, "bias") != nullptr,
          "add_hardware_metadata: node {} (batch_norm2d): the hardware applies a per-channel scale "
                      "and shift in the formats of weight and bias; quantize both (and keep affine=True)",
                      n.name);
  // A beat holds one channel's pixels, or (channels-last) one pixel's channels.
  const std::int64_t run = ctx.h.channels_last ? in[1] : in[2] * in[3];
  require(run % ctx.input_lanes(0) == 0,
          "add_hardware_metadata: node {} (batch_norm2d): {} lanes do not divide {} {}; lower max_parallelism[0]",
          n.name, ctx.input_lanes(0), run, ctx.h.channels_last ? "channels" : "elements of a channel");
  params.insert_or_assign("CHANNELS_LAST", ctx.h.channels_last);
  mase::detail::add_tensor_parameters(params, n, "weight", {});
  mase::detail::add_tensor_parameters(params, n, "bias", {});
  return out_lanes;
}

}  // namespace detail

namespace components {

inline constexpr component mase_batch_norm{
    .module = "mase_batch_norm",
    .source = rtl::mase_batch_norm,
    .needs = component_needs::cast,
    .channels_last = true,
    .metadata = detail::metadata_of_mase_batch_norm,
    .cost = detail::cost_of_mase_batch_norm,
    .plan = detail::plan_of_mase_batch_norm};

}  // namespace components

}  // namespace mase::verilog
