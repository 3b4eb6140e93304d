#pragma once
// mase_cat's descriptor: its SystemVerilog text (rtl/mase_cat.hpp), its timing, the modules it
// needs, and its cost (verilog/component.hpp).

#include <mase/pass/add_hardware_metadata.hpp>
#include <mase/verilog/component.hpp>
#include <mase/verilog/cost.hpp>
#include <mase/verilog/rtl/mase_cat.hpp>

#include <algorithm>
#include <cstdint>
#include <string_view>

namespace mase::verilog {

namespace detail {

inline void cost_of_mase_cat(const cost_context& ctx, component_cost& c) {
  using mase::detail::entry_meta;
  const node& n = ctx.n;
  const auto p = [&](std::string_view key) { return param_int(n, key); };
  const fixed_fmt out = ctx.out;
  const std::int64_t out_lanes = ctx.out_lanes;
  const auto per_sample = [&](const shape& s) { return mase::detail::per_sample(s, ctx.batch); };
  // A beat of one operand or the other per cycle; a constant operand's table.
  c.cycles_per_sample = per_sample(entry_meta(n, "data_out_0")->shape) / out_lanes;
  if (p("CONSTANT_INPUT") >= 0) c.memories.push_back({"constant", out_lanes * out.width, p("TABLE_BEATS"), 1, true});
  c.register_bits = out_lanes * out.width;
  c.select_bits = out_lanes * out.width;
  c.modelled = false;  // not in the fitted logic model yet
}

}  // namespace detail

namespace components {

// All of input 0 first. Channels-last only along the channels (the planner checks the dimension).
inline constexpr component mase_cat{
    .module = "mase_cat",
    .source = rtl::mase_cat,
    .timing = component_timing::sample,
    .exact_by_formats = true,
    .cost = detail::cost_of_mase_cat};

}  // namespace components

}  // namespace mase::verilog
