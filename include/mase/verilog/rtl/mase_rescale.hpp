#pragma once
// mase_rescale: a division by a constant power of two, which keeps every code (the point moves in
// the formats, pass/quantize.hpp's exact_scale_format), so the component is wires.
#include <string_view>

namespace mase::verilog::rtl {
inline constexpr std::string_view mase_rescale = R"sv(// Division by a constant 2^k: the result's format has k more fraction bits than the input's and
// the same codes, so data, valid and ready pass straight through.
module mase_rescale #(
    parameter int DATA_IN_0_PRECISION_0 = 8,
    parameter int DATA_IN_0_PARALLELISM_DIM_0 = 1
) (
    input  logic [DATA_IN_0_PARALLELISM_DIM_0*DATA_IN_0_PRECISION_0-1:0] data_in_0,
    input  logic                                                         data_in_0_valid,
    output logic                                                         data_in_0_ready,
    output logic [DATA_IN_0_PARALLELISM_DIM_0*DATA_IN_0_PRECISION_0-1:0] data_out_0,
    output logic                                                         data_out_0_valid,
    input  logic                                                         data_out_0_ready
);
  assign data_out_0 = data_in_0;
  assign data_out_0_valid = data_in_0_valid;
  assign data_in_0_ready = data_out_0_ready;
endmodule
)sv";
}  // namespace mase::verilog::rtl
