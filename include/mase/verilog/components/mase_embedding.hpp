#pragma once
// mase_embedding's descriptor: its SystemVerilog text (rtl/mase_embedding.hpp), its timing, the modules it
// needs, and its cost (verilog/component.hpp).

#include <mase/pass/add_hardware_metadata.hpp>
#include <mase/verilog/component.hpp>
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

}  // namespace detail

namespace components {

inline constexpr component mase_embedding{
    .module = "mase_embedding",
    .source = rtl::mase_embedding,
    .timing = component_timing::sample,
    .exact_by_formats = true,
    .cost = detail::cost_of_mase_embedding};

}  // namespace components

}  // namespace mase::verilog
