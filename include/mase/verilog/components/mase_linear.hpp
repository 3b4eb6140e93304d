#pragma once
// mase_linear's descriptor: its SystemVerilog text (rtl/mase_linear.hpp), its timing, the modules it
// needs, its cost and how an instance plans its ROMs and parameters (verilog/component.hpp).

#include <mase/verilog/stream_metadata.hpp>
#include <mase/verilog/component.hpp>
#include <mase/eval/lowering.hpp>
#include <mase/verilog/layout.hpp>
#include <mase/verilog/cost.hpp>
#include <mase/verilog/components/tile_cost.hpp>
#include <mase/verilog/rtl/mase_linear.hpp>
#include <mase/eval/mean_rule.hpp>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace mase::verilog {

namespace detail {

// The layer an instance computes: a linear node's op, or a user's op's linear form.
inline op::linear linear_of(const node& n) {
  const std::optional<op::linear> lin = linear_form_of(n.op);
  require(lin.has_value(), "mase_linear: node {} ({}) is neither a linear nor a user's op with a linear_form",
          n.name, n.op_name());
  return *lin;
}

inline void cost_of_mase_linear(const cost_context& ctx, component_cost& c) {
  using mase::detail::hardware_format;
  const node& n = ctx.n;
  const auto p = [&](std::string_view key) { return param_int(n, key); };
  const fixed_fmt x = ctx.x, out = ctx.out;
  const std::int64_t in_elements = ctx.in_elements;
  const fixed_fmt w = hardware_format(n, "weight");
  const bool has_bias = p("HAS_BIAS") != 0;
  const std::int64_t k = p("DATA_IN_0_TENSOR_SIZE_DIM_0"), outputs = p("DATA_OUT_0_TENSOR_SIZE_DIM_0");
  const std::int64_t p0 = p("WEIGHT_PARALLELISM_DIM_0"), p1 = p("WEIGHT_PARALLELISM_DIM_1");
  const int acc = eval::linear_accumulator_width(
      x, w, k, has_bias ? std::optional<fixed_fmt>(hardware_format(n, "bias")) : std::nullopt);
  const std::int64_t chunks = k / p0, groups = outputs / p1, rows = in_elements / k;
  c.cycles_per_sample = rows * chunks * groups;
  c.memories.push_back({"weight", p0 * p1 * w.width, chunks * groups, 1, true});
  if (has_bias) c.memories.push_back({"bias", p1 * acc, groups + 1, 1, true});  // and the zero word
  c.memories.push_back({"row buffer", p0 * x.width, std::int64_t{2} << bits_for(chunks), 1, false});
  add_tile_engine_cost({.x_lanes = p0, .out_lanes = p1, .x_width = x.width, .w_width = w.width,
                        .accumulator_width = acc, .out_width = out.width, .has_bias = has_bias},
                       c);
}

inline void plan_of_mase_linear(const plan_context& ctx, instance_plan& plan) {
  const node& n = ctx.n;
  const eval::fixed_lowering& l = ctx.lowering_of();
  const op::linear lin = linear_of(n);
  const std::int64_t p0 = param_int(n, "WEIGHT_PARALLELISM_DIM_0"), p1 = param_int(n, "WEIGHT_PARALLELISM_DIM_1");
  plan.parameter("ACCUMULATOR_WIDTH", l.accumulator_width);
  plan.rom("weight", linear_weight_order(l.weight_codes, lin.out_features, lin.in_features, p0, p1), p0 * p1,
           l.weight->width);
  if (l.bias) {
    // The tile engine reads a group's word for its first tile and the zero word after the last
    // group's for every other tile (rtl/mase_tile_accumulate.hpp).
    std::vector<std::int64_t> words = l.aligned_bias;
    words.resize(words.size() + static_cast<std::size_t>(p1), 0);
    plan.rom("bias", std::move(words), p1, l.accumulator_width);
  }
  plan.dot_product = true;
  const std::int64_t rows = mase::detail::per_sample(mase::detail::entry_meta(n, "data_in_0")->shape, ctx.batch) /
                            lin.in_features;
  plan.macs_per_sample = lin.in_features * lin.out_features * rows;
  plan.multipliers = p0 * p1;
}

// add_hardware_metadata: its parameters beyond its streams', in MASE's names, and its result's lanes.
inline std::int64_t metadata_of_mase_linear(const metadata_context& ctx) {
  const node& n = ctx.n;
  const std::int64_t tile_limit = ctx.tile_limit;
  auto& params = ctx.h.verilog_param;
  const op::linear linear = linear_of(n);
  const op::linear* lin = &linear;
  std::int64_t out_lanes = ctx.input_lanes(0);
  const std::int64_t p0 = ctx.input_lanes(0);
  require(lin->in_features % p0 == 0,
          "add_hardware_metadata: node {} ({}): its input arrives {} lanes wide, which does not "
                      "divide in_features {}; lower max_parallelism[0]",
                      n.name, n.op_name(), p0, lin->in_features);
  const std::int64_t p1 = largest_divisor_at_most(lin->out_features, tile_limit);
  out_lanes = p1;
  mase::detail::add_tensor_parameters(params, n, "weight", {p0, p1});
  if (lin->bias) mase::detail::add_tensor_parameters(params, n, "bias", {p1});
  params.insert_or_assign("HAS_BIAS", lin->bias);
  return out_lanes;
}

}  // namespace detail

namespace components {

// Waits for a row, in two row banks.
inline constexpr component mase_linear{
    .module = rtl::mase_linear.name,
    .text = rtl::mase_linear,
    .timing = component_timing::sample,
    .needs = component_needs::tiles,
    .metadata = detail::metadata_of_mase_linear,
    .cost = detail::cost_of_mase_linear,
    .plan = detail::plan_of_mase_linear};

}  // namespace components

}  // namespace mase::verilog
