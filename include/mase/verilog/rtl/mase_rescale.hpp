#pragma once
// mase_rescale: a division by a constant power of two, which keeps every code (the point moves in
// the formats, pass/quantize.hpp's exact_scale_format), so the component is wires.
#include <mase/verilog/module_interface.hpp>

namespace mase::verilog::rtl {
inline constexpr module_parameter mase_rescale_parameters[] = {
    {"DATA_IN_0_PRECISION_0", "8"}, {"DATA_IN_0_PARALLELISM_DIM_0", "1"},
};
inline constexpr module_port mase_rescale_ports[] = {
    {in, "data_in_0", "DATA_IN_0_PARALLELISM_DIM_0*DATA_IN_0_PRECISION_0", stream},
    {out, "data_out_0", "DATA_IN_0_PARALLELISM_DIM_0*DATA_IN_0_PRECISION_0", stream},
};
inline constexpr module_text mase_rescale{
    .name = "mase_rescale", .parameters = mase_rescale_parameters, .ports = mase_rescale_ports,
    .description = R"sv(// Division by a constant 2^k: the result's format has k more fraction bits than the input's and
// the same codes, so data, valid and ready pass straight through.
)sv"sv,
    .body = R"sv(  assign data_out_0 = data_in_0;
  assign data_out_0_valid = data_in_0_valid;
  assign data_in_0_ready = data_out_0_ready;
endmodule
)sv"sv};
}  // namespace mase::verilog::rtl
