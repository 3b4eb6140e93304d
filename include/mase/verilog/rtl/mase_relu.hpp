#pragma once
// mase_relu: element-wise max(x, 0) then the cast to the output format; combinational,
// valid/ready pass through.
#include <string_view>

namespace mase::verilog::rtl {
inline constexpr std::string_view mase_relu = R"sv(// Element-wise ReLU followed by the floor-and-saturate cast to the output format.
// Purely combinational: valid and ready pass straight through.
module mase_relu #(
    parameter int DATA_IN_0_PRECISION_0 = 8,
    parameter int DATA_IN_0_PRECISION_1 = 4,
    parameter int DATA_OUT_0_PRECISION_0 = 8,
    parameter int DATA_OUT_0_PRECISION_1 = 4,
    parameter int DATA_IN_0_PARALLELISM_DIM_0 = 1,
    parameter int OUT_SYMMETRIC = 0
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
)sv";
}  // namespace mase::verilog::rtl
