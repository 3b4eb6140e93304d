#pragma once
// The cost of a window sweep (mase_conv2d and mase_pool2d share mase_window_sweep's buffers).
#include <mase/eval/mean_rule.hpp>
#include <mase/verilog/stream_metadata.hpp>
#include <mase/verilog/component.hpp>
#include <mase/verilog/cost.hpp>

#include <algorithm>
#include <cstdint>
#include <string_view>

namespace mase::verilog::detail {

// Whether a conv or pool component's sweep keeps rows: mase_pixel_sweep (channels-last), or
// mase_line_sweep (windows_read_one_channel, the RTL's rule in mase_window_sweep) rather than
// mase_sample_sweep.
inline bool line_buffered(const node& n) {
  const component* c = component_of(n);
  if (c == nullptr || !c->window_sweep) return false;
  if (n.meta.hardware.channels_last) return true;
  const std::int64_t channels = param_int(n, "DATA_IN_0_TENSOR_SIZE_DIM_2");
  const auto groups = n.meta.hardware.verilog_param.find("GROUPS");  // a pool's windows: one channel each
  return windows_read_one_channel(channels, groups == n.meta.hardware.verilog_param.end() ? channels : param_int(n, "GROUPS"),
                                  param_int(n, "DATA_OUT_0_TENSOR_SIZE_DIM_2"));
}
// The rows of that ring: a window's (KERNEL_Y - 1) * DILATION_Y + 1, and STRIDE_Y more that the
// next output row reads, so they load while this row is swept.
inline std::int64_t line_buffer_rows(const node& n) {
  return (param_int(n, "KERNEL_Y") - 1) * param_int(n, "DILATION_Y") + 1 + param_int(n, "STRIDE_Y");
}

inline void window_cost(const cost_context& ctx, component_cost& c, bool conv) {
  using mase::detail::hardware_format;
  const node& n = ctx.n;
  const auto p = [&](std::string_view key) { return param_int(n, key); };
  const fixed_fmt x = ctx.x, out = ctx.out;
  const std::int64_t in_elements = ctx.in_elements, in_lanes = ctx.in_lanes, out_lanes = ctx.out_lanes, stream_cycles = ctx.stream_cycles;
  const std::int64_t channels = p("DATA_IN_0_TENSOR_SIZE_DIM_2"), out_channels = p("DATA_OUT_0_TENSOR_SIZE_DIM_2");
  const std::int64_t taps_2d = p("KERNEL_X") * p("KERNEL_Y");
  const std::int64_t taps = conv ? channels / p("GROUPS") * taps_2d : taps_2d;
  const std::int64_t out_rows = p("DATA_OUT_0_TENSOR_SIZE_DIM_1"), out_cols = p("DATA_OUT_0_TENSOR_SIZE_DIM_0");
  c.cycles_per_sample = std::max(out_channels * out_rows * out_cols / out_lanes * taps, stream_cycles);
  // Channels-last, one ring of rows of every channel serves all lanes (mase_pixel_sweep), and a
  // weight word holds a beat's output channels. Otherwise each output lane keeps its own copy of
  // the buffer: a ring of rows of one channel, or both banks of the sample (mase_window_sweep).
  const std::int64_t per_word = entries_per_rom_word(n, p(conv ? "DATA_OUT_0_PARALLELISM_DIM_0" : "DATA_IN_0_PARALLELISM_DIM_0"));
  if (n.meta.hardware.channels_last)
    c.memories.push_back({"line buffer", in_lanes * x.width,
                          line_buffer_rows(n) * p("DATA_IN_0_TENSOR_SIZE_DIM_0") * channels / in_lanes, 1, false});
  else if (line_buffered(n))
    c.memories.push_back({"line buffer", in_lanes * x.width, line_buffer_rows(n) * p("DATA_IN_0_TENSOR_SIZE_DIM_0") / in_lanes,
                          out_lanes, false});
  else
    c.memories.push_back({"sample buffer", in_lanes * x.width, 2 * (in_elements / in_lanes), out_lanes, false});
  int acc = x.width;
  if (conv) {
    const fixed_fmt w = hardware_format(n, "weight");
    const bool has_bias = p("HAS_BIAS") != 0;
    acc = eval::linear_accumulator_width(
        x, w, taps, has_bias ? std::optional<fixed_fmt>(hardware_format(n, "bias")) : std::nullopt);
    c.multipliers.push_back({out_lanes, x.width, w.width});
    c.memories.push_back({"weight", per_word * w.width, out_channels * taps / per_word, 1, true});
    if (has_bias) c.memories.push_back({"bias", per_word * acc, out_channels / per_word, 1, true});
    c.register_bits = per_word * w.width;
  } else if (p("MODE") == 1) {
    acc = x.width + bits_for(taps_2d);  // the window's exact sum
    // and one reciprocal multiply per lane (mase_reciprocal_divide)
    if (const auto* pool = n.op.get_if<op::avg_pool2d>())
      if (const auto rules = eval::window_mean_rule_of(n, *pool, x, out); rules && rules->uniform_divisor() > 0) {
        const eval::mean_rule& rule = rules->by_divisor.front();
        c.multipliers.push_back({out_lanes, rule.numerator_width(), rule.multiplier_width()});
      }
  }
  c.register_bits += out_lanes * (acc + out.width + x.width);
  c.adder_bits = out_lanes * acc;
  c.select_bits = out_lanes * (out.width + x.width);
}

}  // namespace mase::verilog::detail
