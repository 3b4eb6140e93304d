#pragma once
// mase_linear: streaming Y = X W^T + b, exact accumulation and one cast; a ping-pong input
// buffer and one P1 x P0 weight tile per cycle give GROUPS*CHUNKS cycles per row.
#include <string_view>

namespace mase::verilog::rtl {
inline constexpr std::string_view mase_linear = R"sv(// Streaming fully connected layer Y = X * W^T + b with exact accumulation and one output cast.
// Rows land in a two-bank buffer so the next row loads while this one computes; every cycle
// one P1 x P0 weight tile is read from ROM (stage 1) and multiply-accumulated (stage 2), so a
// row takes GROUPS*CHUNKS cycles. The only stall is a finished group meeting a full output.
module mase_linear #(
    parameter int DATA_IN_0_PRECISION_0 = 8,
    parameter int DATA_IN_0_PRECISION_1 = 4,
    parameter int DATA_IN_0_TENSOR_SIZE_DIM_0 = 4,
    parameter int DATA_IN_0_PARALLELISM_DIM_0 = 2,
    parameter int WEIGHT_PRECISION_0 = 8,
    parameter int WEIGHT_PRECISION_1 = 4,
    parameter int WEIGHT_TENSOR_SIZE_DIM_0 = 4,
    parameter int WEIGHT_TENSOR_SIZE_DIM_1 = 4,
    parameter int WEIGHT_PARALLELISM_DIM_0 = 2,
    parameter int WEIGHT_PARALLELISM_DIM_1 = 2,
    parameter int HAS_BIAS = 1,
    parameter int ACCUMULATOR_WIDTH = 20,
    parameter int DATA_OUT_0_PRECISION_0 = 8,
    parameter int DATA_OUT_0_PRECISION_1 = 4,
    parameter int DATA_OUT_0_TENSOR_SIZE_DIM_0 = 4,
    parameter int DATA_OUT_0_PARALLELISM_DIM_0 = 2,
    parameter int OUT_SYMMETRIC = 0,
    parameter WEIGHT_MEMFILE = "",
    parameter BIAS_MEMFILE = ""
) (
    input  logic                                                              clk,
    input  logic                                                              rst,
    input  logic [DATA_IN_0_PARALLELISM_DIM_0*DATA_IN_0_PRECISION_0-1:0]      data_in_0,
    input  logic                                                              data_in_0_valid,
    output logic                                                              data_in_0_ready,
    output logic [DATA_OUT_0_PARALLELISM_DIM_0*DATA_OUT_0_PRECISION_0-1:0]    data_out_0,
    output logic                                                              data_out_0_valid,
    input  logic                                                              data_out_0_ready
);
  localparam int XW = DATA_IN_0_PRECISION_0;
  localparam int WW = WEIGHT_PRECISION_0;
  localparam int AW = ACCUMULATOR_WIDTH;
  localparam int OW = DATA_OUT_0_PRECISION_0;
  localparam int IN = DATA_IN_0_TENSOR_SIZE_DIM_0;
  localparam int OUT = WEIGHT_TENSOR_SIZE_DIM_1;
  localparam int P0 = DATA_IN_0_PARALLELISM_DIM_0;
  localparam int P1 = WEIGHT_PARALLELISM_DIM_1;
  localparam int CHUNKS = IN / P0;
  localparam int GROUPS = OUT / P1;
  localparam int TILES = GROUPS * CHUNKS;
  localparam int KW = CHUNKS > 1 ? $clog2(CHUNKS) : 1;
  localparam int GW = GROUPS > 1 ? $clog2(GROUPS) : 1;
  localparam int TW = TILES > 1 ? $clog2(TILES) : 1;
  localparam logic [KW-1:0] LAST_CHUNK = KW'(CHUNKS - 1);
  localparam logic [GW-1:0] LAST_GROUP = GW'(GROUPS - 1);

  // The MASE interface repeats some sizes; they must agree (iverilog/Verilator stop at time 0,
  // yosys refuses the unknown task when the condition is constant-true).
  localparam bit PARAMS_CONSISTENT = WEIGHT_TENSOR_SIZE_DIM_0 == IN &&
      WEIGHT_PARALLELISM_DIM_0 == P0 && DATA_OUT_0_TENSOR_SIZE_DIM_0 == OUT &&
      DATA_OUT_0_PARALLELISM_DIM_0 == P1 && IN % P0 == 0 && OUT % P1 == 0;
  initial if (!PARAMS_CONSISTENT) $fatal(1, "mase_linear: inconsistent size parameters");

  // ---- Input side: fill the write bank chunk by chunk, then hand it to compute.
  logic [P0*XW-1:0] row_buffer[0:(2<<KW)-1];  // address {bank, chunk}
  logic [1:0] bank_full;
  logic write_bank, read_bank;
  logic [KW-1:0] write_chunk;
  logic in_fire, in_row_done;

  assign data_in_0_ready = !bank_full[write_bank];
  assign in_fire = data_in_0_valid && data_in_0_ready;
  assign in_row_done = in_fire && write_chunk == LAST_CHUNK;

  always_ff @(posedge clk) begin
    if (in_fire) row_buffer[{write_bank, write_chunk}] <= data_in_0;
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      write_bank  <= 1'b0;
      write_chunk <= '0;
    end else if (in_fire) begin
      write_chunk <= write_chunk == LAST_CHUNK ? '0 : write_chunk + 1'b1;
      if (write_chunk == LAST_CHUNK) write_bank <= !write_bank;
    end
  end

  // ---- Stage 1: issue one tile per cycle (synchronous reads of weights, bias and inputs).
  logic stall, issue, issue_last_chunk, issue_last_group, row_issued;
  logic [KW-1:0] read_chunk;
  logic [GW-1:0] read_group;
  logic [TW-1:0] tile_addr;

  assign issue = bank_full[read_bank] && !stall;
  assign issue_last_chunk = read_chunk == LAST_CHUNK;
  assign issue_last_group = read_group == LAST_GROUP;
  assign row_issued = issue && issue_last_chunk && issue_last_group;

  always_ff @(posedge clk) begin
    if (rst) begin
      read_bank  <= 1'b0;
      read_chunk <= '0;
      read_group <= '0;
      tile_addr  <= '0;
    end else if (issue) begin
      read_chunk <= issue_last_chunk ? '0 : read_chunk + 1'b1;
      if (issue_last_chunk) read_group <= issue_last_group ? '0 : read_group + 1'b1;
      tile_addr <= row_issued ? '0 : tile_addr + 1'b1;
      if (row_issued) read_bank <= !read_bank;
    end
  end

  // A bank is free again once its last tile has been read (the read happens at this edge).
  always_ff @(posedge clk) begin
    if (rst) bank_full <= 2'b00;
    else begin
      if (in_row_done) bank_full[write_bank] <= 1'b1;
      if (row_issued) bank_full[read_bank] <= 1'b0;
    end
  end

  logic [P1*P0*WW-1:0] weight_tile;
  logic [P1*AW-1:0] bias_aligned;
  logic [P0*XW-1:0] stage2_x;
  logic stage2_valid, stage2_first, stage2_last;

  mase_rom #(
      .WIDTH  (P1 * P0 * WW),
      .DEPTH  (TILES),
      .MEMFILE(WEIGHT_MEMFILE)
  ) u_weight_rom (
      .clk (clk),
      .en  (issue),
      .addr(tile_addr),
      .q   (weight_tile)
  );

  if (HAS_BIAS != 0) begin : g_bias
    mase_rom #(
        .WIDTH  (P1 * AW),
        .DEPTH  (GROUPS),
        .MEMFILE(BIAS_MEMFILE)
    ) u_bias_rom (
        .clk (clk),
        .en  (issue),
        .addr(read_group),
        .q   (bias_aligned)
    );
  end else begin : g_no_bias
    assign bias_aligned = '0;
  end

  always_ff @(posedge clk) begin
    if (issue) stage2_x <= row_buffer[{read_bank, read_chunk}];
  end

  always_ff @(posedge clk) begin
    if (rst) stage2_valid <= 1'b0;
    else if (!stall) stage2_valid <= issue;
  end

  always_ff @(posedge clk) begin
    if (issue) begin
      stage2_first <= read_chunk == '0;
      stage2_last  <= issue_last_chunk;
    end
  end

  // ---- Stage 2: P1 x P0 multipliers; each output row sums its P0 products into its accumulator.
  logic [P1*AW-1:0] accumulators, accumulators_next;
  logic [P1*OW-1:0] group_result;
  logic group_done;

  for (genvar r = 0; r < P1; r++) begin : g_row
    logic [P0*AW-1:0] products;
    logic [AW-1:0] row_base, row_sum;
    for (genvar c = 0; c < P0; c++) begin : g_col
      logic signed [XW-1:0] x_value;
      logic signed [WW-1:0] w_value;
      assign x_value = stage2_x[c*XW+:XW];
      assign w_value = weight_tile[(r*P0+c)*WW+:WW];
      assign products[c*AW+:AW] = x_value * w_value;  // AW-bit context: exact (or wraps
      // consistently modulo 2^AW, which still yields the exact final sum when it fits)
    end
    // A group's first tile starts from the bias instead of the running sum.
    assign row_base = stage2_first ? bias_aligned[r*AW+:AW] : accumulators[r*AW+:AW];
    always_comb begin
      row_sum = row_base;
      for (int c = 0; c < P0; c++) row_sum = row_sum + products[c*AW+:AW];
    end
    assign accumulators_next[r*AW+:AW] = row_sum;
  end

  always_ff @(posedge clk) begin
    if (stage2_valid && !stall) accumulators <= accumulators_next;
  end

  mase_cast #(
      .IN_WIDTH (AW),
      .IN_FRAC  (DATA_IN_0_PRECISION_1 + WEIGHT_PRECISION_1),
      .OUT_WIDTH(OW),
      .OUT_FRAC (DATA_OUT_0_PRECISION_1),
      .SYMMETRIC(OUT_SYMMETRIC),
      .LANES    (P1)
  ) u_cast (
      .data_in (accumulators_next),
      .data_out(group_result)
  );

  // ---- Output register: one beat per finished group.
  assign group_done = stage2_valid && stage2_last;
  assign stall = group_done && data_out_0_valid && !data_out_0_ready;

  always_ff @(posedge clk) begin
    if (rst) data_out_0_valid <= 1'b0;
    else if (group_done && !stall) data_out_0_valid <= 1'b1;
    else if (data_out_0_ready) data_out_0_valid <= 1'b0;
  end

  always_ff @(posedge clk) begin
    if (group_done && !stall) data_out_0 <= group_result;
  end
endmodule
)sv";
}  // namespace mase::verilog::rtl
