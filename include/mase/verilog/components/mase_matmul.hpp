#pragma once
// mase_matmul's descriptor: its SystemVerilog text (rtl/mase_matmul.hpp), its timing, the modules it
// needs, its cost and how an instance plans its ROMs and parameters (verilog/component.hpp).

#include <mase/verilog/stream_metadata.hpp>
#include <mase/verilog/component.hpp>
#include <mase/eval/lowering.hpp>
#include <mase/verilog/cost.hpp>
#include <mase/verilog/components/tile_cost.hpp>
#include <mase/verilog/rtl/mase_matmul.hpp>
#include <mase/eval/mean_rule.hpp>

#include <algorithm>
#include <cstdint>
#include <string_view>

namespace mase::verilog {

namespace detail {

inline void cost_of_mase_matmul(const cost_context& ctx, component_cost& c) {
  using mase::detail::hardware_format;
  const node& n = ctx.n;
  const auto p = [&](std::string_view key) { return param_int(n, key); };
  const fixed_fmt x = ctx.x, out = ctx.out;
  const std::int64_t in_elements = ctx.in_elements, in_lanes = ctx.in_lanes, out_lanes = ctx.out_lanes;
  const fixed_fmt y = hardware_format(n, "data_in_1");
  const std::int64_t k = p("DATA_IN_0_TENSOR_SIZE_DIM_0"), m = p("DATA_IN_0_TENSOR_SIZE_DIM_1");
  const std::int64_t cols = p("DATA_IN_1_TENSOR_SIZE_DIM_0");
  const std::int64_t lanes_b = p("DATA_IN_1_PARALLELISM_DIM_0");
  const int acc = eval::dot_product_accumulator_width(x, y, k, false);
  const std::int64_t pairs = in_elements / (m * k);
  c.cycles_per_sample = pairs * std::max(m * (k / in_lanes) * (cols / out_lanes), k * cols / lanes_b);
  c.memories.push_back({"row buffer", in_lanes * x.width, std::int64_t{2} << bits_for(k / in_lanes), 1, false});
  // B's two banks: one memory per row residue (k mod in_lanes), a word of out_lanes columns.
  c.memories.push_back({"B banks", out_lanes * y.width, 2 * k * cols / (in_lanes * out_lanes), in_lanes, false});
  c.register_bits = in_lanes * out_lanes * y.width;  // the B tile read from its banks
  add_tile_engine_cost({.x_lanes = in_lanes, .out_lanes = out_lanes, .x_width = x.width, .w_width = y.width,
                        .accumulator_width = acc, .out_width = out.width, .has_bias = false},
                       c);
}

inline void plan_of_mase_matmul(const plan_context& ctx, instance_plan& plan) {
  const node& n = ctx.n;
  const auto p = [&](std::string_view key) { return param_int(n, key); };
  plan.parameter("ACCUMULATOR_WIDTH", ctx.lowering_of().accumulator_width);
  plan.dot_product = true;
  plan.macs_per_sample = mase::detail::per_sample(mase::detail::entry_meta(n, "data_out_0")->shape, ctx.batch) *
                         p("DATA_IN_0_TENSOR_SIZE_DIM_0");
  plan.multipliers = p("DATA_IN_0_PARALLELISM_DIM_0") * p("DATA_OUT_0_PARALLELISM_DIM_0");
}

// add_hardware_metadata: its parameters beyond its streams', in MASE's names, and its result's lanes.
inline std::int64_t metadata_of_mase_matmul(const metadata_context& ctx) {
  const node& n = ctx.n;
  const std::int64_t tile_limit = ctx.tile_limit;
  const std::string_view op = n.op_name();
  auto& params = ctx.h.verilog_param;
  std::int64_t out_lanes = ctx.input_lanes(0);
  // Matrix pairs stream one after another: A [..., M, K] and B [..., K, N] with the same
  // leading dimensions (the hardware does not broadcast).
  const shape& a = mase::detail::entry_meta(n, "data_in_0")->shape;
  const shape& b = mase::detail::entry_meta(n, "data_in_1")->shape;
  require(a.size() >= 2 && a.size() == b.size() && std::equal(a.begin(), a.end() - 2, b.begin()),
          "add_hardware_metadata: node {} ({}): the hardware multiplies matrix pairs of equal "
                      "leading dimensions ([..., M, K] · [..., K, N]); broadcast the operands first",
                      n.name, op);
  require(a.back() % ctx.input_lanes(0) == 0,
          "add_hardware_metadata: node {} ({}): its first input arrives {} lanes wide, which must "
          "divide K = {}; lower max_parallelism[0]",
          n.name, op, ctx.input_lanes(0), a.back());
  out_lanes = largest_divisor_at_most(b.back(), tile_limit);
  // B arrives at the output's lanes (the emitter converts it): a beat is one word of its
  // memories.
  params.insert_or_assign("DATA_IN_1_PARALLELISM_DIM_0", out_lanes);
  return out_lanes;
}

}  // namespace detail

namespace components {

inline constexpr component mase_matmul{
    .module = rtl::mase_matmul.name,
    .text = rtl::mase_matmul,
    .timing = component_timing::sample,
    .needs = component_needs::tiles,
    .metadata = detail::metadata_of_mase_matmul,
    .cost = detail::cost_of_mase_matmul,
    .plan = detail::plan_of_mase_matmul};

}  // namespace components

}  // namespace mase::verilog
