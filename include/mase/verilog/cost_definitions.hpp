#pragma once
// The hardware cost model's walk over a graph (verilog/cost.hpp declares it and states the model):
// inline in the header-only mode, compiled once in mase::mase (src/verilog.cpp) otherwise.

#include <mase/eval/bit_exact.hpp>
#include <mase/verilog/cost.hpp>

// A unit that links the compiled library (mase::mase) gets these from the library; defining them again here would
// break the link with duplicate symbols.
#if MASE_EXTERN_INSTANTIATIONS && !defined(MASE_DEFINE_COMPILED)
#error "this header holds definitions that the compiled library (mase::mase) provides; include <mase/verilog/cost.hpp> instead"
#endif

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include <fmt/core.h>

namespace mase::verilog {

namespace detail {

MASE_COMPILED_INLINE component_cost component_cost_of(const node& n, std::int64_t batch) {
  using mase::detail::entry_meta;
  using mase::detail::hardware_format;
  const auto per_sample = [batch](const shape& s) { return mase::detail::per_sample(s, batch); };
  component_cost c{.node = n.name, .module = *n.meta.hardware.module};
  const std::string& module = c.module;
  const auto p = [&](std::string_view key) { return param_int(n, key); };
  const fixed_fmt x = hardware_format(n, "data_in_0"), out = hardware_format(n, "data_out_0");
  const std::int64_t in_elements = per_sample(entry_meta(n, "data_in_0")->shape);
  const std::int64_t in_lanes = p("DATA_IN_0_PARALLELISM_DIM_0"), out_lanes = p("DATA_OUT_0_PARALLELISM_DIM_0");
  const std::int64_t stream_cycles = in_elements / in_lanes;

  if (module == "mase_linear") {
    const fixed_fmt w = hardware_format(n, "weight");
    const bool has_bias = p("HAS_BIAS") != 0;
    const std::int64_t k = p("DATA_IN_0_TENSOR_SIZE_DIM_0"), outputs = p("DATA_OUT_0_TENSOR_SIZE_DIM_0");
    const std::int64_t p0 = p("WEIGHT_PARALLELISM_DIM_0"), p1 = p("WEIGHT_PARALLELISM_DIM_1");
    const int acc = eval::linear_accumulator_width(
        x, w, k, has_bias ? std::optional<fixed_fmt>(hardware_format(n, "bias")) : std::nullopt);
    const std::int64_t chunks = k / p0, groups = outputs / p1, rows = in_elements / k;
    c.cycles_per_sample = rows * chunks * groups;
    c.multipliers.push_back({p0 * p1, x.width, w.width});
    c.memories.push_back({"weight", p0 * p1 * w.width, chunks * groups, 1, true});
    if (has_bias) c.memories.push_back({"bias", p1 * acc, groups, 1, true});
    c.memories.push_back({"row buffer", p0 * x.width, std::int64_t{2} << bits_for(chunks), 1, false});
    c.register_bits = p1 * (acc + out.width) + p0 * x.width;
    c.adder_bits = p1 * p0 * acc;
    c.select_bits = p1 * out.width;
  } else if (module == "mase_conv2d" || module == "mase_pool2d") {
    const std::int64_t channels = p("DATA_IN_0_TENSOR_SIZE_DIM_2"), out_channels = p("DATA_OUT_0_TENSOR_SIZE_DIM_2");
    const std::int64_t taps_2d = p("KERNEL_X") * p("KERNEL_Y");
    const bool conv = module == "mase_conv2d";
    const std::int64_t taps = conv ? channels / p("GROUPS") * taps_2d : taps_2d;
    const std::int64_t out_rows = p("DATA_OUT_0_TENSOR_SIZE_DIM_1"), out_cols = p("DATA_OUT_0_TENSOR_SIZE_DIM_0");
    c.cycles_per_sample = std::max(out_channels * out_rows * out_cols / out_lanes * taps, stream_cycles);
    // Channels-last, one ring of rows of every channel serves all lanes (mase_pixel_sweep), and a
    // weight word holds a beat's output channels. Otherwise each output lane keeps its own copy of
    // the buffer: a ring of rows of one channel, or both banks of the sample (mase_window_sweep).
    const std::int64_t per_word = entries_per_rom_word(n);
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
  } else if (module == "mase_batch_norm") {
    const fixed_fmt w = hardware_format(n, "weight"), b = hardware_format(n, "bias");
    const int acc = eval::linear_accumulator_width(x, w, 1, b);
    const std::int64_t channels = p("DATA_IN_0_TENSOR_SIZE_DIM_2");
    c.cycles_per_sample = stream_cycles;
    c.multipliers.push_back({in_lanes, x.width, w.width});
    const std::int64_t per_word = entries_per_rom_word(n);
    c.memories.push_back({"scale", per_word * w.width, channels / per_word, 1, true});
    c.memories.push_back({"shift", per_word * acc, channels / per_word, 1, true});
    c.register_bits = in_lanes * out.width + w.width + acc;
    c.adder_bits = in_lanes * acc;
    c.select_bits = in_lanes * out.width;
  } else if (module == "mase_matmul") {
    const fixed_fmt y = hardware_format(n, "data_in_1");
    const std::int64_t k = p("DATA_IN_0_TENSOR_SIZE_DIM_0"), m = p("DATA_IN_0_TENSOR_SIZE_DIM_1");
    const std::int64_t cols = p("DATA_IN_1_TENSOR_SIZE_DIM_0");
    const std::int64_t lanes_b = p("DATA_IN_1_PARALLELISM_DIM_0");
    const int acc = eval::dot_product_accumulator_width(x, y, k, false);
    const std::int64_t pairs = in_elements / (m * k);
    c.cycles_per_sample = pairs * std::max(m * (k / in_lanes) * (cols / out_lanes), k * cols / lanes_b);
    c.multipliers.push_back({in_lanes * out_lanes, x.width, y.width});
    c.memories.push_back({"row buffer", in_lanes * x.width, std::int64_t{2} << bits_for(k / in_lanes), 1, false});
    // B's two banks: one memory per row residue (k mod in_lanes), a word of out_lanes columns.
    c.memories.push_back({"B banks", out_lanes * y.width, 2 * k * cols / (in_lanes * out_lanes), in_lanes, false});
    c.register_bits = in_lanes * out_lanes * y.width + out_lanes * (acc + out.width) + in_lanes * x.width;
    c.adder_bits = out_lanes * in_lanes * acc;
    c.select_bits = out_lanes * out.width;
  } else if (module == "mase_binary") {
    // At the result's pace; a constant operand's table, or a broadcast operand's order table and
    // its two banks (read at every lane).
    const fixed_fmt y = hardware_format(n, "data_in_1");
    const int exact = std::max(x.width - x.frac, y.width - y.frac) + std::max(x.frac, y.frac) + 1;
    const std::int64_t beats = p("SAMPLE_BEATS"), constant = p("CONSTANT_INPUT"), broadcast = p("BROADCAST_INPUT");
    c.cycles_per_sample = beats;
    if (constant >= 0)
      c.memories.push_back({"constant", out_lanes * (constant == 0 ? x : y).width, beats, 1, true});
    if (broadcast >= 0) {
      const std::int64_t size = p("BROADCAST_SIZE");
      c.memories.push_back({"order", out_lanes * bits_for(size), beats, 1, true});
      c.memories.push_back({"broadcast banks", (broadcast == 0 ? x : y).width, 2 * size, out_lanes, false});
    }
    if (p("OPERATION") == 2) c.multipliers.push_back({out_lanes, x.width, y.width});
    else c.adder_bits = out_lanes * exact;
    c.register_bits = out_lanes * out.width;
    c.select_bits = out_lanes * out.width;
  } else if (module == "mase_slice") {
    // Every input beat in one cycle, the kept ones through the output register.
    c.cycles_per_sample = stream_cycles;
    c.register_bits = out_lanes * out.width;
    c.modelled = false;  // not in the fitted logic model yet
  } else if (module == "mase_cat") {
    // A beat of one operand or the other per cycle; a constant operand's table.
    c.cycles_per_sample = per_sample(entry_meta(n, "data_out_0")->shape) / out_lanes;
    if (p("CONSTANT_INPUT") >= 0) c.memories.push_back({"constant", out_lanes * out.width, p("TABLE_BEATS"), 1, true});
    c.register_bits = out_lanes * out.width;
    c.select_bits = out_lanes * out.width;
    c.modelled = false;  // not in the fitted logic model yet
  } else if (module == "mase_embedding") {
    // A row of lanes from the ROM per cycle.
    const std::int64_t rows = p("ROWS"), row_length = p("ROW_LENGTH");
    c.cycles_per_sample = per_sample(entry_meta(n, "data_out_0")->shape) / out_lanes;
    c.memories.push_back({"table", out_lanes * out.width, rows * row_length / out_lanes, 1, true});
    c.register_bits = out_lanes * out.width;
  } else if (module == "mase_lut") {
    c.cycles_per_sample = stream_cycles;
    c.memories.push_back({"table", out.width, std::int64_t{1} << x.width, in_lanes, true});
    c.register_bits = in_lanes * out.width;
  } else if (module == "mase_softmax") {
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
  } else if (module == "mase_rescale") {
    c.cycles_per_sample = stream_cycles;
    c.modelled = false;  // wires: nothing to synthesize
  } else if (module == "mase_permute") {
    // One element in per cycle (its input is converted to one lane); two banks of a sample.
    c.cycles_per_sample = std::max(in_elements, per_sample(entry_meta(n, "data_out_0")->shape) / out_lanes);
    c.memories.push_back({"sample banks", x.width, 2 * in_elements, 1, false});
    c.modelled = false;
  } else if (module == "mase_layer_norm") {
    // Load (the sums), the root (P + 2 cycles: V, then one bit of R per cycle) and emit, per
    // row. As softmax's, the logic is outside the fitted model; the row buffer is counted.
    const std::int64_t row = p("ROW_LENGTH"), rows = in_elements / row;
    const int reciprocal_bits = eval::normalization_reciprocal_bits(x, out, row);
    c.cycles_per_sample = 2 * stream_cycles + rows * (reciprocal_bits + 2);
    c.memories.push_back({"row", in_lanes * x.width, row / in_lanes, 1, false});
    c.modelled = false;
  } else if (module == "mase_mean") {
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
  } else if (module == "mase_relu") {
    c.cycles_per_sample = stream_cycles;
    c.register_bits = in_lanes * out.width;
    c.select_bits = in_lanes * out.width;
  } else {
    c.cycles_per_sample = stream_cycles;
    c.modelled = false;
  }
  return c;
}

}  // namespace detail

MASE_COMPILED_INLINE hardware_cost estimate_hardware_cost(const graph& g) {
  hardware_cost cost;
  const std::int64_t batch = mase::detail::hardware_batch(g);
  for (node_id id : g.order()) {
    const node& n = g[id];
    if (n.is<op::placeholder>()) {
      const std::int64_t elements = mase::detail::per_sample(mase::detail::entry_meta(n, "data_out_0")->shape, batch);
      const std::int64_t lanes = mase::detail::stream_innermost(n, "data_out_0");
      const std::int64_t stream_lanes = largest_divisor_at_most(lanes, n.meta.hardware.max_parallelism[0]);
      const std::int64_t beats = elements / stream_lanes;
      if (beats > cost.cycles_per_sample) cost.cycles_per_sample = beats, cost.bottleneck = n.name;
      continue;
    }
    if (n.meta.hardware.is_implicit || !n.meta.hardware.module) continue;
    component_cost c = detail::component_cost_of(n, batch);
    if (c.cycles_per_sample > cost.cycles_per_sample) cost.cycles_per_sample = c.cycles_per_sample, cost.bottleneck = n.name;
    cost.components.push_back(std::move(c));
  }
  cost.resources = mapping::resources_of(cost.components);
  return cost;
}

}  // namespace mase::verilog
