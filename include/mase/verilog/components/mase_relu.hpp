#pragma once
// mase_relu's descriptor: its SystemVerilog text (rtl/mase_relu.hpp), its timing, the modules it
// needs, and its cost (verilog/component.hpp).

#include <mase/verilog/stream_metadata.hpp>
#include <mase/verilog/component.hpp>
#include <mase/verilog/cost.hpp>
#include <mase/verilog/rtl/mase_relu.hpp>

#include <algorithm>
#include <cstdint>
#include <string_view>

namespace mase::verilog {

namespace detail {

inline void cost_of_mase_relu(const cost_context& ctx, component_cost& c) {
  const fixed_fmt out = ctx.out;
  const std::int64_t in_lanes = ctx.in_lanes, stream_cycles = ctx.stream_cycles;
  c.cycles_per_sample = stream_cycles;
  c.register_bits = in_lanes * out.width;
  c.select_bits = in_lanes * out.width;
}

}  // namespace detail

namespace components {

inline constexpr component mase_relu{
    .module = rtl::mase_relu.name,
    .text = rtl::mase_relu,
    .needs = component_needs::cast,
    .channels_last = true,
    .cost = detail::cost_of_mase_relu};

}  // namespace components

}  // namespace mase::verilog
