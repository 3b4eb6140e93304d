#pragma once
// mase_rescale's descriptor: its SystemVerilog text (rtl/mase_rescale.hpp), its timing, the modules it
// needs, and its cost (verilog/component.hpp).

#include <mase/pass/add_hardware_metadata.hpp>
#include <mase/verilog/component.hpp>
#include <mase/verilog/cost.hpp>
#include <mase/verilog/rtl/mase_rescale.hpp>

#include <algorithm>
#include <cstdint>
#include <string_view>

namespace mase::verilog {

namespace detail {

inline void cost_of_mase_rescale(const cost_context& ctx, component_cost& c) {
  const std::int64_t stream_cycles = ctx.stream_cycles;
  c.cycles_per_sample = stream_cycles;
  c.modelled = false;  // wires: nothing to synthesize
}

}  // namespace detail

namespace components {

inline constexpr component mase_rescale{
    .module = "mase_rescale",
    .source = rtl::mase_rescale,
    .exact_by_formats = true,
    .channels_last = true,
    .cost = detail::cost_of_mase_rescale};

}  // namespace components

}  // namespace mase::verilog
