#pragma once
// mase_mean: global average pooling, the integer rule of eval/mean_rule.hpp: each run of COUNT
// consecutive values summed exactly, divided by one constant multiply and shift, saturated.
#include <string_view>

namespace mase::verilog::rtl {
inline constexpr std::string_view mase_mean = R"sv(// Mean of each run of COUNT consecutive values (a channel's plane: global average pooling), as
// eval/mean_rule.hpp defines it: y = saturate(floor(S * 2^NUMERATOR_SHIFT / D)) for the exact sum S.
// The division is ((S << NUMERATOR_SHIFT) + OFFSET) * MULTIPLIER >> SHIFT, less OFFSET_QUOTIENT:
// OFFSET makes the numerator non-negative, and the rule chose MULTIPLIER and SHIFT so that the
// product's floor is the exact quotient for every numerator the input formats allow. The lanes
// are summed in one cycle and the runs accumulated beat by beat; one mean leaves per run, on one
// lane, from a register that refills in the cycle it drains.
module mase_mean #(
    parameter int DATA_IN_0_PRECISION_0 = 8,
    parameter int DATA_IN_0_PARALLELISM_DIM_0 = 1,
    parameter int COUNT = 4,
    parameter int DATA_OUT_0_PRECISION_0 = 8,
    parameter int DATA_OUT_0_PRECISION_1 = 4,
    parameter int DATA_OUT_0_PARALLELISM_DIM_0 = 1,
    parameter int OUT_SYMMETRIC = 0,
    parameter int SUM_WIDTH = 10,
    parameter int NUMERATOR_SHIFT = 0,
    parameter int NUMERATOR_WIDTH = 10,
    parameter int MULTIPLIER_WIDTH = 1,
    parameter int SHIFT = 0,
    parameter logic [63:0] OFFSET = 64'd0,
    parameter logic [63:0] OFFSET_QUOTIENT = 64'd0,
    parameter logic [63:0] MULTIPLIER = 64'd1
) (
    input  logic                                                          clk,
    input  logic                                                          rst,
    input  logic [DATA_IN_0_PARALLELISM_DIM_0*DATA_IN_0_PRECISION_0-1:0]  data_in_0,
    input  logic                                                          data_in_0_valid,
    output logic                                                          data_in_0_ready,
    output logic [DATA_OUT_0_PARALLELISM_DIM_0*DATA_OUT_0_PRECISION_0-1:0] data_out_0,
    output logic                                                          data_out_0_valid,
    input  logic                                                          data_out_0_ready
);
  localparam int LANES = DATA_IN_0_PARALLELISM_DIM_0;
  localparam int XW = DATA_IN_0_PRECISION_0;
  localparam int OW = DATA_OUT_0_PRECISION_0;
  localparam int BEATS = COUNT / LANES;
  localparam int BW = BEATS > 1 ? $clog2(BEATS) : 1;
  localparam logic [BW-1:0] LAST_BEAT = BW'(BEATS - 1);
  // The shifted numerator and the 64-bit offsets, with a sign bit above both.
  localparam int NW = SUM_WIDTH + NUMERATOR_SHIFT;
  localparam int WIDE = (NW > 64 ? NW : 64) + 1;
  localparam int PRODUCT_WIDTH = NUMERATOR_WIDTH + MULTIPLIER_WIDTH;
  localparam int RESULT_WIDTH = (PRODUCT_WIDTH > 64 ? PRODUCT_WIDTH : 64) + 2;

  initial if (COUNT % LANES != 0 || DATA_OUT_0_PARALLELISM_DIM_0 != 1)
    $fatal(1, "mase_mean: lanes must divide COUNT, and the means leave on one lane");

  // ---- The run's exact sum: this beat's lanes, plus the beats before it.
  logic signed [SUM_WIDTH-1:0] lane_sum, earlier, total;
  always_comb begin
    lane_sum = '0;
    for (int l = 0; l < LANES; l++) lane_sum = lane_sum + SUM_WIDTH'($signed(data_in_0[l*XW+:XW]));
  end
  assign total = earlier + lane_sum;

  // ---- The division by the constant: offset, multiply, shift, remove the offset's quotient.
  logic signed [WIDE-1:0] numerator;
  logic [NUMERATOR_WIDTH-1:0] positive;
  logic [PRODUCT_WIDTH-1:0] product, quotient;
  logic signed [RESULT_WIDTH-1:0] mean;
  logic [OW-1:0] cast_result;
  assign numerator = WIDE'(total) <<< NUMERATOR_SHIFT;
  assign positive = NUMERATOR_WIDTH'(numerator + WIDE'(OFFSET));  // in [0, 2^NUMERATOR_WIDTH)
  assign product = PRODUCT_WIDTH'(positive) * PRODUCT_WIDTH'(MULTIPLIER);
  assign quotient = product >> SHIFT;
  assign mean = RESULT_WIDTH'(quotient) - RESULT_WIDTH'(OFFSET_QUOTIENT);

  mase_cast #(
      .IN_WIDTH (RESULT_WIDTH),
      .IN_FRAC  (DATA_OUT_0_PRECISION_1),
      .OUT_WIDTH(OW),
      .OUT_FRAC (DATA_OUT_0_PRECISION_1),
      .SYMMETRIC(OUT_SYMMETRIC),
      .LANES    (1)
  ) u_saturate (
      .data_in (mean),
      .data_out(cast_result)
  );

  // ---- Handshakes: a beat is taken while the output register can take a mean.
  logic [BW-1:0] beat;
  logic in_fire, last;
  assign data_in_0_ready = !data_out_0_valid || data_out_0_ready;
  assign in_fire = data_in_0_valid && data_in_0_ready;
  assign last = beat == LAST_BEAT;

  always_ff @(posedge clk) begin
    if (rst) begin
      beat <= '0;
      earlier <= '0;
      data_out_0_valid <= 1'b0;
    end else begin
      if (data_out_0_ready) data_out_0_valid <= 1'b0;
      if (in_fire) begin
        beat <= last ? '0 : beat + 1'b1;
        earlier <= last ? '0 : total;
        if (last) data_out_0_valid <= 1'b1;
      end
    end
  end
  always_ff @(posedge clk) begin
    if (in_fire && last) data_out_0 <= cast_result;
  end
endmodule
)sv";
}  // namespace mase::verilog::rtl
