#pragma once
// mase_lut: any unary activation as a full table over the input codes ($readmemh), read
// combinationally by every lane; valid/ready pass through.
#include <string_view>

namespace mase::verilog::rtl {
inline constexpr std::string_view mase_lut = R"sv(// Any unary activation as a full lookup table over the input code space (2^IN_W entries),
// read combinationally by every lane; entry i answers input code i - 2^(IN_W-1), so the
// index is the input code with its sign bit inverted. Valid and ready pass straight through.
module mase_lut #(
    parameter int DATA_IN_0_PRECISION_0 = 8,
    parameter int DATA_OUT_0_PRECISION_0 = 8,
    parameter int DATA_IN_0_PARALLELISM_DIM_0 = 1,
    parameter LUT_MEMFILE = ""
) (
    input  logic [DATA_IN_0_PARALLELISM_DIM_0*DATA_IN_0_PRECISION_0-1:0]  data_in_0,
    input  logic                                                          data_in_0_valid,
    output logic                                                          data_in_0_ready,
    output logic [DATA_IN_0_PARALLELISM_DIM_0*DATA_OUT_0_PRECISION_0-1:0] data_out_0,
    output logic                                                          data_out_0_valid,
    input  logic                                                          data_out_0_ready
);
  localparam int LANES = DATA_IN_0_PARALLELISM_DIM_0;
  localparam int IN_W = DATA_IN_0_PRECISION_0;
  localparam int OUT_W = DATA_OUT_0_PRECISION_0;

  logic [OUT_W-1:0] table_mem[0:(1<<IN_W)-1];
  // No file by default: yosys elaborates every module with its defaults when reading it.
  initial if (LUT_MEMFILE != "") $readmemh(LUT_MEMFILE, table_mem);

  for (genvar lane = 0; lane < LANES; lane++) begin : g_lane
    logic [IN_W-1:0] index;
    assign index = data_in_0[lane*IN_W+:IN_W] ^ {1'b1, {(IN_W - 1) {1'b0}}};
    assign data_out_0[lane*OUT_W+:OUT_W] = table_mem[index];
  end

  assign data_out_0_valid = data_in_0_valid;
  assign data_in_0_ready = data_out_0_ready;
endmodule
)sv";
}  // namespace mase::verilog::rtl
