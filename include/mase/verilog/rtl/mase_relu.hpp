#pragma once
// mase_relu: element-wise max(x, 0) then the cast to the output format; combinational,
// valid/ready pass through.
#include <mase/verilog/module_interface.hpp>

namespace mase::verilog::rtl {
inline constexpr module_parameter mase_relu_parameters[] = {
    {"DATA_IN_0_PRECISION_0", "8"}, {"DATA_IN_0_PRECISION_1", "4"}, {"DATA_OUT_0_PRECISION_0", "8"},
    {"DATA_OUT_0_PRECISION_1", "4"}, {"DATA_IN_0_PARALLELISM_DIM_0", "1"}, {"OUT_SYMMETRIC", "0"},
};
inline constexpr module_port mase_relu_ports[] = {
    {in, "data_in_0", "DATA_IN_0_PARALLELISM_DIM_0*DATA_IN_0_PRECISION_0", stream},
    {out, "data_out_0", "DATA_IN_0_PARALLELISM_DIM_0*DATA_OUT_0_PRECISION_0", stream},
};
inline constexpr module_text mase_relu{
    .name = "mase_relu", .parameters = mase_relu_parameters, .ports = mase_relu_ports,
    .description = R"sv(// Element-wise ReLU followed by the floor-and-saturate cast to the output format.
// Purely combinational: valid and ready pass straight through.
)sv"sv,
    .body = R"sv(  localparam int LANES = DATA_IN_0_PARALLELISM_DIM_0;
  localparam int IN_W = DATA_IN_0_PRECISION_0;

  logic [LANES*IN_W-1:0] rectified;
  for (genvar lane = 0; lane < LANES; lane++) begin : g_lane
    assign rectified[lane*IN_W+:IN_W] =
        data_in_0[lane*IN_W+IN_W-1] ? {IN_W{1'b0}} : data_in_0[lane*IN_W+:IN_W];
  end

  mase_cast #(
      .IN_WIDTH (IN_W),
      .IN_FRAC  (DATA_IN_0_PRECISION_1),
      .OUT_WIDTH(DATA_OUT_0_PRECISION_0),
      .OUT_FRAC (DATA_OUT_0_PRECISION_1),
      .SYMMETRIC(OUT_SYMMETRIC),
      .LANES    (LANES)
  ) u_cast (
      .data_in (rectified),
      .data_out(data_out_0)
  );

  assign data_out_0_valid = data_in_0_valid;
  assign data_in_0_ready = data_out_0_ready;
endmodule
)sv"sv};
}  // namespace mase::verilog::rtl
