#pragma once
// mase_binary: element-wise add/sub/mul of two joined streams, exact then one cast, behind
// one output register stage that refills while it drains (full throughput).
#include <string_view>

namespace mase::verilog::rtl {
inline constexpr std::string_view mase_binary = R"sv(// Element-wise add (0), sub (1) or mul (2) of two streams, computed exactly and then cast once.
// The two inputs are joined (both transfer together) into one output register stage, which
// breaks the multiplier/cast path; the stage refills in the cycle it drains (full throughput).
module mase_binary #(
    parameter int OPERATION = 0,
    parameter int DATA_IN_0_PRECISION_0 = 8,
    parameter int DATA_IN_0_PRECISION_1 = 4,
    parameter int DATA_IN_1_PRECISION_0 = 8,
    parameter int DATA_IN_1_PRECISION_1 = 4,
    parameter int DATA_OUT_0_PRECISION_0 = 8,
    parameter int DATA_OUT_0_PRECISION_1 = 4,
    parameter int DATA_IN_0_PARALLELISM_DIM_0 = 1,
    parameter int OUT_SYMMETRIC = 0
) (
    input  logic                                                          clk,
    input  logic                                                          rst,
    input  logic [DATA_IN_0_PARALLELISM_DIM_0*DATA_IN_0_PRECISION_0-1:0]  data_in_0,
    input  logic                                                          data_in_0_valid,
    output logic                                                          data_in_0_ready,
    input  logic [DATA_IN_0_PARALLELISM_DIM_0*DATA_IN_1_PRECISION_0-1:0]  data_in_1,
    input  logic                                                          data_in_1_valid,
    output logic                                                          data_in_1_ready,
    output logic [DATA_IN_0_PARALLELISM_DIM_0*DATA_OUT_0_PRECISION_0-1:0] data_out_0,
    output logic                                                          data_out_0_valid,
    input  logic                                                          data_out_0_ready
);
  localparam int LANES = DATA_IN_0_PARALLELISM_DIM_0;
  localparam int W0 = DATA_IN_0_PRECISION_0;
  localparam int F0 = DATA_IN_0_PRECISION_1;
  localparam int W1 = DATA_IN_1_PRECISION_0;
  localparam int F1 = DATA_IN_1_PRECISION_1;
  localparam int OUT_W = DATA_OUT_0_PRECISION_0;
  localparam bit IS_MUL = OPERATION == 2;
  // add/sub: both operands aligned to the finer fraction, one guard bit for the carry.
  localparam int ALIGN_F = F0 > F1 ? F0 : F1;
  localparam int ALIGNED_W0 = W0 + ALIGN_F - F0;
  localparam int ALIGNED_W1 = W1 + ALIGN_F - F1;
  localparam int SUM_W = (ALIGNED_W0 > ALIGNED_W1 ? ALIGNED_W0 : ALIGNED_W1) + 1;
  // Exact result format fed to the cast.
  localparam int EXACT_W = IS_MUL ? W0 + W1 : SUM_W;
  localparam int EXACT_F = IS_MUL ? F0 + F1 : ALIGN_F;

  logic [LANES*EXACT_W-1:0] exact;
  logic [LANES*OUT_W-1:0] cast_result;

  for (genvar lane = 0; lane < LANES; lane++) begin : g_lane
    logic signed [W0-1:0] a;
    logic signed [W1-1:0] b;
    assign a = data_in_0[lane*W0+:W0];
    assign b = data_in_1[lane*W1+:W1];
    if (IS_MUL) begin : g_mul
      assign exact[lane*EXACT_W+:EXACT_W] = a * b;
    end else begin : g_add_sub
      logic signed [SUM_W-1:0] a_aligned, b_aligned;
      assign a_aligned = {{(SUM_W - W0) {a[W0-1]}}, a} <<< (ALIGN_F - F0);
      assign b_aligned = {{(SUM_W - W1) {b[W1-1]}}, b} <<< (ALIGN_F - F1);
      assign exact[lane*EXACT_W+:EXACT_W] =
          OPERATION == 1 ? a_aligned - b_aligned : a_aligned + b_aligned;
    end
  end

  mase_cast #(
      .IN_WIDTH (EXACT_W),
      .IN_FRAC  (EXACT_F),
      .OUT_WIDTH(OUT_W),
      .OUT_FRAC (DATA_OUT_0_PRECISION_1),
      .SYMMETRIC(OUT_SYMMETRIC),
      .LANES    (LANES)
  ) u_cast (
      .data_in (exact),
      .data_out(cast_result)
  );

  // The output register can take a new word when it is empty or being drained this cycle.
  logic can_load, both_valid;
  assign can_load = !data_out_0_valid || data_out_0_ready;
  assign both_valid = data_in_0_valid && data_in_1_valid;
  assign data_in_0_ready = can_load && data_in_1_valid;
  assign data_in_1_ready = can_load && data_in_0_valid;

  always_ff @(posedge clk) begin
    if (rst) data_out_0_valid <= 1'b0;
    else if (can_load) data_out_0_valid <= both_valid;
  end
  always_ff @(posedge clk) begin
    if (can_load && both_valid) data_out_0 <= cast_result;
  end
endmodule
)sv";
}  // namespace mase::verilog::rtl
