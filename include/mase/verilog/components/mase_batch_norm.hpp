#pragma once
// mase_batch_norm's descriptor: its SystemVerilog text (rtl/mase_batch_norm.hpp), its timing, the modules it
// needs, its cost and how an instance plans its ROMs and parameters (verilog/component.hpp).

#include <mase/verilog/stream_metadata.hpp>
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

// Table entries a ROM word holds: a beat's LANES channels when the stream is channels-last.
inline std::int64_t table_entries_per_word(const node& n) {
  return param_int(n, "CHANNELS_LAST") != 0 ? param_int(n, "DATA_IN_0_PARALLELISM_DIM_0") : 1;
}

inline void cost_of_mase_batch_norm(const cost_context& ctx, component_cost& c) {
  using mase::detail::hardware_format;
  const node& n = ctx.n;
  const auto p = [&](std::string_view key) { return param_int(n, key); };
  const fixed_fmt x = ctx.x, out = ctx.out;
  const std::int64_t in_lanes = ctx.in_lanes, stream_cycles = ctx.stream_cycles;
  const fixed_fmt w = hardware_format(n, "weight"), b = hardware_format(n, "bias");
  const int acc = eval::linear_accumulator_width(x, w, 1, b);
  const std::int64_t channels = p("CHANNELS");
  c.cycles_per_sample = stream_cycles;
  c.multipliers.push_back({in_lanes, x.width, w.width});
  const std::int64_t per_word = table_entries_per_word(n);
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
  const std::int64_t per_word = table_entries_per_word(n);
  plan.rom("scale", l.weight_codes, per_word, l.weight->width);
  plan.rom("shift", l.aligned_bias, per_word, l.accumulator_width);
  plan.multipliers = param_int(n, "DATA_IN_0_PARALLELISM_DIM_0");
}

// add_hardware_metadata: its parameters beyond its streams', in MASE's names, and its result's lanes.
// [N, C, H, W] (2-d) and [N, C, L] (1-d) stream a channel's elements together (or, channels-last,
// a pixel's channels); [N, C] streams each sample's C channels, LANES of them a beat.
inline std::int64_t metadata_of_mase_batch_norm(const metadata_context& ctx) {
  const node& n = ctx.n;
  auto& params = ctx.h.verilog_param;
  const shape& in = mase::detail::entry_meta(n, "data_in_0")->shape;
  require(mase::detail::entry_meta(n, "weight") != nullptr && mase::detail::entry_meta(n, "bias") != nullptr,
          "add_hardware_metadata: node {} ({}): the hardware applies a per-channel scale and shift in the "
          "formats of weight and bias; quantize both (and keep affine=True)",
          n.name, n.op_name());
  const std::int64_t channels = in[1];
  std::int64_t plane = 1;
  for (int d = 2; d < in.size(); ++d) plane *= in[d];
  const bool channels_last = ctx.h.channels_last || in.size() == 2;
  const std::int64_t run = channels_last ? channels : plane;
  require(run % ctx.input_lanes(0) == 0,
          "add_hardware_metadata: node {} ({}): {} lanes do not divide {} {}; lower max_parallelism[0]", n.name,
          n.op_name(), ctx.input_lanes(0), run, channels_last ? "channels" : "elements of a channel");
  params.insert_or_assign("CHANNELS", channels);
  params.insert_or_assign("PLANE", plane);
  params.insert_or_assign("CHANNELS_LAST", channels_last);
  mase::detail::add_tensor_parameters(params, n, "weight", {});
  mase::detail::add_tensor_parameters(params, n, "bias", {});
  return ctx.input_lanes(0);
}

}  // namespace detail

namespace components {

inline constexpr component mase_batch_norm{
    .module = rtl::mase_batch_norm.name,
    .text = rtl::mase_batch_norm,
    .needs = component_needs::cast,
    .channels_last = true,
    .metadata = detail::metadata_of_mase_batch_norm,
    .cost = detail::cost_of_mase_batch_norm,
    .plan = detail::plan_of_mase_batch_norm};

}  // namespace components

}  // namespace mase::verilog
