#pragma once
// mase_rescale's descriptor: its SystemVerilog text (rtl/mase_rescale.hpp), its timing, the modules it
// needs, and its cost (verilog/component.hpp).

#include <mase/pass/quantize.hpp>
#include <mase/verilog/stream_metadata.hpp>
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

// add_hardware_metadata: its parameters beyond its streams', in MASE's names, and its result's lanes.
inline std::int64_t metadata_of_mase_rescale(const metadata_context& ctx) {
  const node& n = ctx.n;
  const graph& g = ctx.g;
  const std::string_view op = n.op_name();
  std::int64_t out_lanes = ctx.input_lanes(0);
  const std::optional<fixed_fmt> scaled =
      mase::detail::exact_scale_format(g, n, format(mase::detail::hardware_format(n, "data_in_0")));
  require(scaled.has_value() && format(*scaled) == mase::detail::entry_meta(n, "data_out_0")->precision,
          "add_hardware_metadata: node {} ({}): the hardware divides only by a constant power of two, "
          "which keeps the codes and moves the point; this one divides by {}",
          n.name, op, g[n.inputs[1]].name);
  return out_lanes;
}

}  // namespace detail

namespace components {

inline constexpr component mase_rescale{
    .module = rtl::mase_rescale.name,
    .text = rtl::mase_rescale,
    .exact_by_formats = true,
    .channels_last = true,
    .metadata = detail::metadata_of_mase_rescale,
    .cost = detail::cost_of_mase_rescale};

}  // namespace components

}  // namespace mase::verilog
