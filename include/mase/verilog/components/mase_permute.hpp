#pragma once
// mase_permute's descriptor: its SystemVerilog text (rtl/mase_permute.hpp), its timing, the modules it
// needs, and its cost (verilog/component.hpp).

#include <mase/pass/add_hardware_metadata.hpp>
#include <mase/verilog/component.hpp>
#include <mase/verilog/cost.hpp>
#include <mase/verilog/rtl/mase_permute.hpp>

#include <algorithm>
#include <cstdint>
#include <string_view>

namespace mase::verilog {

namespace detail {

inline void cost_of_mase_permute(const cost_context& ctx, component_cost& c) {
  using mase::detail::entry_meta;
  const node& n = ctx.n;
  const fixed_fmt x = ctx.x;
  const std::int64_t in_elements = ctx.in_elements, out_lanes = ctx.out_lanes;
  const auto per_sample = [&](const shape& s) { return mase::detail::per_sample(s, ctx.batch); };
  // One element in per cycle (its input is converted to one lane); two banks of a sample.
  c.cycles_per_sample = std::max(in_elements, per_sample(entry_meta(n, "data_out_0")->shape) / out_lanes);
  c.memories.push_back({"sample banks", x.width, 2 * in_elements, 1, false});
  c.modelled = false;
}

}  // namespace detail

namespace components {

// Waits for a sample, one in each of its two banks.
inline constexpr component mase_permute{
    .module = "mase_permute",
    .source = rtl::mase_permute,
    .timing = component_timing::sample,
    .sample_banks = 2,
    .exact_by_formats = true,
    .cost = detail::cost_of_mase_permute};

}  // namespace components

}  // namespace mase::verilog
