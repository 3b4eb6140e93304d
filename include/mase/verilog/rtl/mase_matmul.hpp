#pragma once
// mase_matmul: streaming C = A B of two streams, exact accumulation and one cast; B is held
// whole in two register banks and A rows in a ping-pong buffer, one P1 x PA tile per cycle.
#include <string_view>

namespace mase::verilog::rtl {
inline constexpr std::string_view mase_matmul = R"sv(// Streaming matrix product C = A * B of two streams (pair j: A_j is M x K, B_j is K x N), with
// exact accumulation and one output cast. B_j is held whole in one of two register banks so
// B_{j+1} loads while pair j computes; each row of A lands in a two-bank buffer as in
// mase_linear. Every cycle one P1 x PA tile of B is read (stage 1) and multiply-accumulated
// with a chunk of the A row (stage 2), so a row takes (N/P1)*(K/PA) cycles. The only stall is a
// finished group meeting a full output register.
module mase_matmul #(
    parameter int DATA_IN_0_PRECISION_0 = 8,
    parameter int DATA_IN_0_PRECISION_1 = 4,
    parameter int DATA_IN_0_TENSOR_SIZE_DIM_0 = 4,
    parameter int DATA_IN_0_TENSOR_SIZE_DIM_1 = 2,
    parameter int DATA_IN_0_PARALLELISM_DIM_0 = 2,
    parameter int DATA_IN_1_PRECISION_0 = 8,
    parameter int DATA_IN_1_PRECISION_1 = 4,
    parameter int DATA_IN_1_TENSOR_SIZE_DIM_0 = 4,
    parameter int DATA_IN_1_TENSOR_SIZE_DIM_1 = 4,
    parameter int DATA_IN_1_PARALLELISM_DIM_0 = 2,
    parameter int ACCUMULATOR_WIDTH = 19,
    parameter int DATA_OUT_0_PRECISION_0 = 8,
    parameter int DATA_OUT_0_PRECISION_1 = 4,
    parameter int DATA_OUT_0_TENSOR_SIZE_DIM_0 = 4,
    parameter int DATA_OUT_0_PARALLELISM_DIM_0 = 2,
    parameter int OUT_SYMMETRIC = 0
) (
    input  logic                                                              clk,
    input  logic                                                              rst,
    input  logic [DATA_IN_0_PARALLELISM_DIM_0*DATA_IN_0_PRECISION_0-1:0]      data_in_0,
    input  logic                                                              data_in_0_valid,
    output logic                                                              data_in_0_ready,
    input  logic [DATA_IN_1_PARALLELISM_DIM_0*DATA_IN_1_PRECISION_0-1:0]      data_in_1,
    input  logic                                                              data_in_1_valid,
    output logic                                                              data_in_1_ready,
    output logic [DATA_OUT_0_PARALLELISM_DIM_0*DATA_OUT_0_PRECISION_0-1:0]    data_out_0,
    output logic                                                              data_out_0_valid,
    input  logic                                                              data_out_0_ready
);
  localparam int A_W = DATA_IN_0_PRECISION_0;
  localparam int B_W = DATA_IN_1_PRECISION_0;
  localparam int ACC_W = ACCUMULATOR_WIDTH;
  localparam int OUT_W = DATA_OUT_0_PRECISION_0;
  localparam int K = DATA_IN_0_TENSOR_SIZE_DIM_0;
  localparam int M = DATA_IN_0_TENSOR_SIZE_DIM_1;
  localparam int N = DATA_IN_1_TENSOR_SIZE_DIM_0;
  localparam int PA = DATA_IN_0_PARALLELISM_DIM_0;
  localparam int PB = DATA_IN_1_PARALLELISM_DIM_0;
  localparam int P1 = DATA_OUT_0_PARALLELISM_DIM_0;
  localparam int CHUNKS = K / PA;
  localparam int GROUPS = N / P1;
  localparam int TILES = GROUPS * CHUNKS;
  localparam int TILE_BITS = P1 * PA * B_W;
  localparam int B_BEATS = K * N / PB;
  localparam int KW = CHUNKS > 1 ? $clog2(CHUNKS) : 1;
  localparam int GW = GROUPS > 1 ? $clog2(GROUPS) : 1;
  localparam int TW = TILES > 1 ? $clog2(TILES) : 1;
  localparam int TIW = $clog2(2 * TILES);  // a tile of either B bank
  localparam int MW = M > 1 ? $clog2(M) : 1;
  localparam int BBW = B_BEATS > 1 ? $clog2(B_BEATS) : 1;
  localparam logic [KW-1:0] LAST_CHUNK = KW'(CHUNKS - 1);
  localparam logic [GW-1:0] LAST_GROUP = GW'(GROUPS - 1);
  localparam logic [MW-1:0] LAST_ROW = MW'(M - 1);
  localparam logic [BBW-1:0] LAST_B_BEAT = BBW'(B_BEATS - 1);

  // The MASE interface repeats some sizes; they must agree (iverilog/Verilator stop at time 0,
  // yosys refuses the unknown task when the condition is constant-true).
  localparam bit PARAMS_CONSISTENT = DATA_IN_1_TENSOR_SIZE_DIM_1 == K &&
      DATA_OUT_0_TENSOR_SIZE_DIM_0 == N && K % PA == 0 && N % PB == 0 && N % P1 == 0;
  initial if (!PARAMS_CONSISTENT) $fatal(1, "mase_matmul: inconsistent size parameters");

  // ---- A side: fill the write bank chunk by chunk, then hand the row to compute.
  logic [PA*A_W-1:0] row_buffer[0:(2<<KW)-1];  // address {bank, chunk}
  logic [1:0] a_bank_full;
  logic a_write_bank, a_read_bank;
  logic [KW-1:0] a_write_chunk;
  logic a_fire, a_row_done;

  assign data_in_0_ready = !a_bank_full[a_write_bank];
  assign a_fire = data_in_0_valid && data_in_0_ready;
  assign a_row_done = a_fire && a_write_chunk == LAST_CHUNK;

  always_ff @(posedge clk) begin
    if (a_fire) row_buffer[{a_write_bank, a_write_chunk}] <= data_in_0;
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      a_write_bank  <= 1'b0;
      a_write_chunk <= '0;
    end else if (a_fire) begin
      a_write_chunk <= a_write_chunk == LAST_CHUNK ? '0 : a_write_chunk + 1'b1;
      if (a_write_chunk == LAST_CHUNK) a_write_bank <= !a_write_bank;
    end
  end

  // ---- B side: beat s of a matrix holds elements s*PB .. s*PB+PB-1 in row-major order. Each
  // element has its own register, placed where stage 1 reads it: tile (g, k) of its bank holds
  // B[k*PA + c][g*P1 + r] at lane r*PA + c, tile index g*CHUNKS + k (banks one after the other).
  logic [1:0] b_bank_full;
  logic b_write_bank, b_read_bank;
  logic [BBW-1:0] b_write_beat;
  logic b_fire, b_matrix_done;
  logic [2*B_BEATS-1:0] b_slot_write;  // one-hot: which (bank, beat) this transfer fills
  logic [2*TILES*TILE_BITS-1:0] b_tiles;

  assign data_in_1_ready = !b_bank_full[b_write_bank];
  assign b_fire = data_in_1_valid && data_in_1_ready;
  assign b_matrix_done = b_fire && b_write_beat == LAST_B_BEAT;

  always_ff @(posedge clk) begin
    if (rst) begin
      b_write_bank <= 1'b0;
      b_write_beat <= '0;
    end else if (b_fire) begin
      b_write_beat <= b_matrix_done ? '0 : b_write_beat + 1'b1;
      if (b_matrix_done) b_write_bank <= !b_write_bank;
    end
  end

  for (genvar bank = 0; bank < 2; bank++) begin : g_b_bank
    for (genvar beat = 0; beat < B_BEATS; beat++) begin : g_b_beat
      assign b_slot_write[bank*B_BEATS+beat] =
          b_fire && b_write_bank == (bank != 0) && b_write_beat == BBW'(beat);
    end
    for (genvar row = 0; row < K; row++) begin : g_b_row
      for (genvar col = 0; col < N; col++) begin : g_b_col
        localparam int TILE = bank * TILES + (col / P1) * CHUNKS + row / PA;
        localparam int LANE = (col % P1) * PA + row % PA;
        localparam int ELEMENT = row * N + col;
        logic [B_W-1:0] element;
        always_ff @(posedge clk) begin
          if (b_slot_write[bank*B_BEATS+ELEMENT/PB])
            element <= data_in_1[(ELEMENT%PB)*B_W+:B_W];
        end
        assign b_tiles[TILE*TILE_BITS+LANE*B_W+:B_W] = element;
      end
    end
  end

  // ---- Stage 1: issue one tile per cycle (register the B tile and the A chunk).
  logic stall, issue, issue_last_chunk, issue_last_group, row_issued, pair_issued;
  logic [KW-1:0] read_chunk;
  logic [GW-1:0] read_group;
  logic [MW-1:0] read_row;
  logic [TW-1:0] tile_addr;
  logic [TIW-1:0] b_tile_index;

  assign issue = a_bank_full[a_read_bank] && b_bank_full[b_read_bank] && !stall;
  assign issue_last_chunk = read_chunk == LAST_CHUNK;
  assign issue_last_group = read_group == LAST_GROUP;
  assign row_issued = issue && issue_last_chunk && issue_last_group;
  assign pair_issued = row_issued && read_row == LAST_ROW;
  assign b_tile_index = b_read_bank ? TIW'(TILES) + TIW'(tile_addr) : TIW'(tile_addr);

  always_ff @(posedge clk) begin
    if (rst) begin
      a_read_bank <= 1'b0;
      b_read_bank <= 1'b0;
      read_chunk  <= '0;
      read_group  <= '0;
      read_row    <= '0;
      tile_addr   <= '0;
    end else if (issue) begin
      read_chunk <= issue_last_chunk ? '0 : read_chunk + 1'b1;
      if (issue_last_chunk) read_group <= issue_last_group ? '0 : read_group + 1'b1;
      tile_addr <= row_issued ? '0 : tile_addr + 1'b1;
      if (row_issued) begin
        a_read_bank <= !a_read_bank;
        read_row <= pair_issued ? '0 : read_row + 1'b1;
      end
      if (pair_issued) b_read_bank <= !b_read_bank;
    end
  end

  // A bank is free again once its last tile has been read (the read happens at this edge):
  // an A bank after its row, a B bank after the last row of its pair.
  always_ff @(posedge clk) begin
    if (rst) begin
      a_bank_full <= 2'b00;
      b_bank_full <= 2'b00;
    end else begin
      if (a_row_done) a_bank_full[a_write_bank] <= 1'b1;
      if (row_issued) a_bank_full[a_read_bank] <= 1'b0;
      if (b_matrix_done) b_bank_full[b_write_bank] <= 1'b1;
      if (pair_issued) b_bank_full[b_read_bank] <= 1'b0;
    end
  end

  logic [TILE_BITS-1:0] stage2_b;
  logic [PA*A_W-1:0] stage2_a;
  logic stage2_valid, stage2_first, stage2_last;

  always_ff @(posedge clk) begin
    if (issue) begin
      stage2_a <= row_buffer[{a_read_bank, read_chunk}];
      stage2_b <= b_tiles[b_tile_index*TILE_BITS+:TILE_BITS];
      stage2_first <= read_chunk == '0;
      stage2_last <= issue_last_chunk;
    end
  end

  always_ff @(posedge clk) begin
    if (rst) stage2_valid <= 1'b0;
    else if (!stall) stage2_valid <= issue;
  end

  // ---- Stage 2: P1 x PA multipliers; each output lane sums its PA products into its accumulator.
  logic [P1*ACC_W-1:0] accumulators, accumulators_next;
  logic [P1*OUT_W-1:0] group_result;
  logic group_done;

  for (genvar r = 0; r < P1; r++) begin : g_lane
    logic [PA*ACC_W-1:0] products;
    logic [ACC_W-1:0] lane_base, lane_sum;
    for (genvar c = 0; c < PA; c++) begin : g_term
      logic signed [A_W-1:0] a_value;
      logic signed [B_W-1:0] b_value;
      assign a_value = stage2_a[c*A_W+:A_W];
      assign b_value = stage2_b[(r*PA+c)*B_W+:B_W];
      assign products[c*ACC_W+:ACC_W] = a_value * b_value;  // ACC_W-bit context: exact (or wraps
      // consistently modulo 2^ACC_W, which still yields the exact final sum when it fits)
    end
    // A group's first tile starts from zero instead of the running sum.
    assign lane_base = stage2_first ? '0 : accumulators[r*ACC_W+:ACC_W];
    always_comb begin
      lane_sum = lane_base;
      for (int c = 0; c < PA; c++) lane_sum = lane_sum + products[c*ACC_W+:ACC_W];
    end
    assign accumulators_next[r*ACC_W+:ACC_W] = lane_sum;
  end

  always_ff @(posedge clk) begin
    if (stage2_valid && !stall) accumulators <= accumulators_next;
  end

  mase_cast #(
      .IN_WIDTH (ACC_W),
      .IN_FRAC  (DATA_IN_0_PRECISION_1 + DATA_IN_1_PRECISION_1),
      .OUT_WIDTH(OUT_W),
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
