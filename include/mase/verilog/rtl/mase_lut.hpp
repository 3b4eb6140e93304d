#pragma once
// mase_lut: any unary activation as a full table over the input codes ($readmemh), read
// combinationally by every lane; valid/ready pass through.
#include <mase/verilog/module_interface.hpp>

namespace mase::verilog::rtl {
inline constexpr module_parameter mase_lut_parameters[] = {
    {"DATA_IN_0_PRECISION_0", "8"}, {"DATA_OUT_0_PRECISION_0", "8"}, {"DATA_IN_0_PARALLELISM_DIM_0", "1"},
    {"LUT_MEMFILE", "\"\"", ""},
};
inline constexpr module_port mase_lut_ports[] = {
    {in, "data_in_0", "DATA_IN_0_PARALLELISM_DIM_0*DATA_IN_0_PRECISION_0", stream},
    {out, "data_out_0", "DATA_IN_0_PARALLELISM_DIM_0*DATA_OUT_0_PRECISION_0", stream},
};
inline constexpr module_text mase_lut{.name = "mase_lut", .parameters = mase_lut_parameters, .ports = mase_lut_ports,
    .description = R"sv(// Any unary activation as a full lookup table over the input code space (2^IN_W entries),
// read combinationally by every lane; entry i answers input code i - 2^(IN_W-1), so the
// index is the input code with its sign bit inverted. Valid and ready pass straight through.
)sv"sv,
    .body = R"sv(  localparam int LANES = DATA_IN_0_PARALLELISM_DIM_0;
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
)sv"sv};
}  // namespace mase::verilog::rtl
