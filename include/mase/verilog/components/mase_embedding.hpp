#pragma once
// mase_embedding's descriptor: its SystemVerilog text (rtl/mase_embedding.hpp), its timing, the modules it
// needs, its cost and how an instance plans its ROMs and parameters (verilog/component.hpp).

#include <mase/verilog/stream_metadata.hpp>
#include <mase/verilog/component.hpp>
#include <mase/eval/lowering.hpp>
#include <mase/eval/fixed_rules.hpp>
#include <mase/quant/quantize.hpp>
#include <mase/verilog/cost.hpp>
#include <mase/verilog/rtl/mase_embedding.hpp>

#include <algorithm>
#include <cstdint>
#include <string_view>

namespace mase::verilog {

namespace detail {

inline void cost_of_mase_embedding(const cost_context& ctx, component_cost& c) {
  using mase::detail::entry_meta;
  const node& n = ctx.n;
  const auto p = [&](std::string_view key) { return param_int(n, key); };
  const fixed_fmt out = ctx.out;
  const std::int64_t out_lanes = ctx.out_lanes;
  const auto per_sample = [&](const shape& s) { return mase::detail::per_sample(s, ctx.batch); };
  // A row of lanes from the ROM per cycle.
  const std::int64_t rows = p("ROWS"), row_length = p("ROW_LENGTH");
  c.cycles_per_sample = per_sample(entry_meta(n, "data_out_0")->shape) / out_lanes;
  c.memories.push_back({"table", out_lanes * out.width, rows * row_length / out_lanes, 1, true});
  c.register_bits = out_lanes * out.width;
}

inline void plan_of_mase_embedding(const plan_context& ctx, instance_plan& plan) {
  // The table as the evaluator's result holds it: the quantized weight in the result's format.
  const node& n = ctx.n;
  const fixed_fmt out = mase::detail::hardware_format(n, "data_out_0");
  require(ctx.quantized_parameters != nullptr, "emit_verilog: node {} (embedding): no evaluated weight", n.name);
  const std::span<const float> weight = ctx.quantized_parameters->at("weight").values();
  std::vector<float> table(weight.begin(), weight.end());
  quantize(format(out), table, table);
  std::vector<std::int64_t> codes(table.size());
  for (std::size_t i = 0; i < table.size(); ++i) codes[i] = eval::raw_of(table[i], out.frac);
  plan.rom("weight", std::move(codes), param_int(n, "DATA_OUT_0_PARALLELISM_DIM_0"), out.width);
}

// add_hardware_metadata: its parameters beyond its streams', in MASE's names, and its result's lanes.
inline std::int64_t metadata_of_mase_embedding(const metadata_context& ctx) {
  const node& n = ctx.n;
  const std::int64_t stream_limit = ctx.stream_limit;
  auto& params = ctx.h.verilog_param;
  const auto* table = &n.as<op::embedding>();
  std::int64_t out_lanes = ctx.input_lanes(0);
  // Rows of the ROM (the table in the result's format) stream out at the innermost
  // dimension's lanes.
  out_lanes = largest_divisor_at_most(table->embedding_dim, stream_limit);
  mase::detail::add_tensor_parameters(params, n, "weight", {out_lanes});
  params.insert_or_assign("ROWS", table->num_embeddings);
  params.insert_or_assign("ROW_LENGTH", table->embedding_dim);
  return out_lanes;
}

}  // namespace detail

namespace components {

inline constexpr component mase_embedding{
    .module = rtl::mase_embedding.name,
    .text = rtl::mase_embedding,
    .timing = component_timing::sample,
    .exact_by_formats = true,
    .metadata = detail::metadata_of_mase_embedding,
    .cost = detail::cost_of_mase_embedding,
    .plan = detail::plan_of_mase_embedding};

}  // namespace components

}  // namespace mase::verilog
