#pragma once
// mase_layer_norm's descriptor: its SystemVerilog text (rtl/mase_layer_norm.hpp), its timing, the modules it
// needs, its cost and how an instance plans its ROMs and parameters (verilog/component.hpp).

#include <mase/verilog/stream_metadata.hpp>
#include <mase/verilog/component.hpp>
#include <mase/eval/lowering.hpp>
#include <mase/verilog/cost.hpp>
#include <mase/verilog/rtl/mase_layer_norm.hpp>
#include <mase/eval/mean_rule.hpp>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <string_view>

namespace mase::verilog {

namespace detail {

inline void cost_of_mase_layer_norm(const cost_context& ctx, component_cost& c) {
  const node& n = ctx.n;
  const auto p = [&](std::string_view key) { return param_int(n, key); };
  const fixed_fmt x = ctx.x, out = ctx.out;
  const std::int64_t in_elements = ctx.in_elements, in_lanes = ctx.in_lanes, stream_cycles = ctx.stream_cycles;
  // Load (the sums), the root (P + 2 cycles: V, then one bit of R per cycle) and emit, per
  // row. As softmax's, the logic is outside the fitted model; the row buffer is counted.
  const std::int64_t row = p("ROW_LENGTH"), rows = in_elements / row;
  const int reciprocal_bits = eval::normalization_reciprocal_bits(x, out, row);
  c.cycles_per_sample = 2 * stream_cycles + rows * (reciprocal_bits + 2);
  c.memories.push_back({"row", in_lanes * x.width, row / in_lanes, 1, false, /*combinational_read=*/true});
  c.modelled = false;
}

inline void plan_of_mase_layer_norm(const plan_context& ctx, instance_plan& plan) {
  const node& n = ctx.n;
  const eval::normalization_rule& rule = *ctx.lowering_of().normalization_rows;
  const std::int64_t lanes = param_int(n, "DATA_IN_0_PARALLELISM_DIM_0");
  require(rule.epsilon < (std::int64_t{1} << 31),
          "emit_verilog: node {} ({}): eps·N²·2^(2·F_x) = {} does not fit the component's 32-bit EPSILON; "
          "use a smaller eps or fewer input fraction bits",
          n.name, n.op_name(), rule.epsilon);
  plan.parameter("RECIPROCAL_BITS", rule.reciprocal_bits);
  plan.parameter("PRODUCT_FRAC", rule.product_frac());
  plan.parameter("EPSILON", rule.epsilon);
  if (rule.weight) plan.rom("weight", rule.weight_codes, lanes, rule.weight->width);
  if (rule.bias) {
    // Two's complement words just wide enough for every aligned bias.
    int width = 2;
    for (std::int64_t b : rule.aligned_bias)
      width = std::max(width, 1 + static_cast<int>(std::bit_width(static_cast<std::uint64_t>(b < 0 ? ~b : b))));
    plan.rom("bias", rule.aligned_bias, lanes, width);
    plan.parameter("BIAS_WIDTH", width);
  }
}

// add_hardware_metadata: its parameters beyond its streams', in MASE's names, and its result's lanes.
inline std::int64_t metadata_of_mase_layer_norm(const metadata_context& ctx) {
  const node& n = ctx.n;
  const std::string_view op = n.op_name();
  auto& params = ctx.h.verilog_param;
  std::int64_t out_lanes = ctx.input_lanes(0);
  // Rows of the normalized (trailing) dimensions stream one after another.
  const auto* layer = n.op.get_if<op::layer_norm>();
  const dims& normalized = layer ? layer->normalized_shape : n.op.get_if<op::rms_norm>()->normalized_shape;
  std::int64_t row = 1;
  for (std::int64_t d : normalized) row *= d;
  require(row % ctx.input_lanes(0) == 0,
          "add_hardware_metadata: node {} ({}): its input arrives {} lanes wide, which does not divide "
          "its rows of {}; lower max_parallelism[0]",
          n.name, op, ctx.input_lanes(0), row);
  params.insert_or_assign("ROW_LENGTH", row);
  params.insert_or_assign("CENTRED", layer != nullptr);
  for (const char* role : {"weight", "bias"}) {
    const bool present = n.parameters.find(role) != n.parameters.end();
    if (present) mase::detail::add_tensor_parameters(params, n, role, {ctx.input_lanes(0)});  // fixed point, or an error
    params.insert_or_assign(std::string(role) == "weight" ? "HAS_WEIGHT" : "HAS_BIAS", present);
  }
  return out_lanes;
}

}  // namespace detail

namespace components {

// Waits for a whole row (its sums) before its first output.
inline constexpr component mase_layer_norm{
    .module = rtl::mase_layer_norm.name,
    .text = rtl::mase_layer_norm,
    .timing = component_timing::sample,
    .needs = component_needs::cast,
    .metadata = detail::metadata_of_mase_layer_norm,
    .cost = detail::cost_of_mase_layer_norm,
    .plan = detail::plan_of_mase_layer_norm};

}  // namespace components

}  // namespace mase::verilog
