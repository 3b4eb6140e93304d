#pragma once
// mase_slice's descriptor: its SystemVerilog text (rtl/mase_slice.hpp), its timing, the modules it
// needs, and its cost (verilog/component.hpp).

#include <mase/verilog/stream_metadata.hpp>
#include <mase/verilog/component.hpp>
#include <mase/verilog/cost.hpp>
#include <mase/verilog/rtl/mase_slice.hpp>

#include <algorithm>
#include <cstdint>
#include <string_view>

namespace mase::verilog {

namespace detail {

inline void cost_of_mase_slice(const cost_context& ctx, component_cost& c) {
  const fixed_fmt out = ctx.out;
  const std::int64_t out_lanes = ctx.out_lanes, stream_cycles = ctx.stream_cycles;
  // Every input beat in one cycle, the kept ones through the output register.
  c.cycles_per_sample = stream_cycles;
  c.register_bits = out_lanes * out.width;
  c.modelled = false;  // not in the fitted logic model yet
}

}  // namespace detail

namespace components {

// Its first kept word may come after every word it drops.
inline constexpr component mase_slice{
    .module = rtl::mase_slice.name,
    .text = rtl::mase_slice,
    .timing = component_timing::sample,
    .exact_by_formats = true,
    .cost = detail::cost_of_mase_slice};

}  // namespace components

}  // namespace mase::verilog
