#pragma once
// mase_conv2d's descriptor: its SystemVerilog text (rtl/mase_conv2d.hpp), its timing, the modules it
// needs, and its cost (verilog/component.hpp).

#include <mase/pass/add_hardware_metadata.hpp>
#include <mase/verilog/component.hpp>
#include <mase/verilog/cost.hpp>
#include <mase/verilog/rtl/mase_conv2d.hpp>
#include <mase/verilog/components/window_cost.hpp>

#include <algorithm>
#include <cstdint>
#include <string_view>

namespace mase::verilog {

namespace detail {

inline void cost_of_mase_conv2d(const cost_context& ctx, component_cost& c) { window_cost(ctx, c, true); }

}  // namespace detail

namespace components {

// The two-bank sample buffer; a line-buffered one (line_buffered) waits for rows and holds a
// few (the emitter's timing_of).
inline constexpr component mase_conv2d{
    .module = "mase_conv2d",
    .source = rtl::mase_conv2d,
    .timing = component_timing::sample,
    .sample_banks = 2,
    .needs = component_needs::conv,
    .channels_last = true,
    .cost = detail::cost_of_mase_conv2d};

}  // namespace components

}  // namespace mase::verilog
