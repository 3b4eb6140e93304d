#pragma once
// mase_matmul: streaming C = A B of two streams, exact accumulation and one cast; B is held
// whole in two banks (PA memories, a word of P1 columns per row and tile) and A rows in a
// ping-pong buffer, one P1 x PA tile per cycle.
#include <mase/verilog/module_interface.hpp>

namespace mase::verilog::rtl {
inline constexpr module_parameter mase_matmul_parameters[] = {
    {"DATA_IN_0_PRECISION_0", "8"}, {"DATA_IN_0_PRECISION_1", "4"}, {"DATA_IN_0_TENSOR_SIZE_DIM_0", "4"},
    {"DATA_IN_0_TENSOR_SIZE_DIM_1", "2"}, {"DATA_IN_0_PARALLELISM_DIM_0", "2"}, {"DATA_IN_1_PRECISION_0", "8"},
    {"DATA_IN_1_PRECISION_1", "4"}, {"DATA_IN_1_TENSOR_SIZE_DIM_0", "4"}, {"DATA_IN_1_TENSOR_SIZE_DIM_1", "4"},
    {"DATA_IN_1_PARALLELISM_DIM_0", "2"}, {"ACCUMULATOR_WIDTH", "19"}, {"DATA_OUT_0_PRECISION_0", "8"},
    {"DATA_OUT_0_PRECISION_1", "4"}, {"DATA_OUT_0_TENSOR_SIZE_DIM_0", "4"}, {"DATA_OUT_0_PARALLELISM_DIM_0", "2"},
    {"OUT_SYMMETRIC", "0"},
};
inline constexpr module_port mase_matmul_ports[] = {
    {in, "clk"}, {in, "rst"},
    {in, "data_in_0", "DATA_IN_0_PARALLELISM_DIM_0*DATA_IN_0_PRECISION_0", stream},
    {in, "data_in_1", "DATA_IN_1_PARALLELISM_DIM_0*DATA_IN_1_PRECISION_0", stream},
    {out, "data_out_0", "DATA_OUT_0_PARALLELISM_DIM_0*DATA_OUT_0_PRECISION_0", stream},
};
inline constexpr module_text mase_matmul{
    .name = "mase_matmul", .parameters = mase_matmul_parameters, .ports = mase_matmul_ports,
    .description = R"sv(// Streaming matrix product C = A * B of two streams (pair j: A_j is M x K, B_j is K x N), with
// exact accumulation and one output cast. B_j arrives P1 elements per beat (the output's lanes)
// and is held whole in one of two banks so B_{j+1} loads while pair j computes; each row of A lands in a two-bank buffer
// (mase_row_buffer). Every cycle mase_tile_accumulate issues one P1 x PA tile of B, read here,
// and multiply-accumulates it with a chunk of the A row down its pipeline, so a row takes
// (N/P1)*(K/PA) cycles.
)sv"sv,
    .body = R"sv(  localparam int A_W = DATA_IN_0_PRECISION_0;
  localparam int B_W = DATA_IN_1_PRECISION_0;
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
  localparam int TW = TILES > 1 ? $clog2(TILES) : 1;
  localparam int TIW = $clog2(2 * TILES);  // a tile of either B bank
  localparam int MW = M > 1 ? $clog2(M) : 1;
  localparam int BBW = B_BEATS > 1 ? $clog2(B_BEATS) : 1;
  localparam logic [MW-1:0] LAST_ROW = MW'(M - 1);
  localparam logic [BBW-1:0] LAST_B_BEAT = BBW'(B_BEATS - 1);

  // The MASE interface repeats some sizes; they must agree (iverilog/Verilator stop at time 0,
  // yosys refuses the unknown task when the condition is constant-true).
  localparam bit PARAMS_CONSISTENT = DATA_IN_1_TENSOR_SIZE_DIM_1 == K &&
      DATA_OUT_0_TENSOR_SIZE_DIM_0 == N && K % PA == 0 && PB == P1 && N % P1 == 0;
  initial if (!PARAMS_CONSISTENT) $fatal(1, "mase_matmul: inconsistent size parameters");

  // ---- A side: each row of A lands in a two-bank buffer, read a chunk per issued tile.
  logic issue, row_issued, pair_issued, a_row_valid;
  logic [KW-1:0] issue_chunk;
  logic [TW-1:0] issue_tile;
  logic [PA*A_W-1:0] a_chunk;

  mase_row_buffer #(
      .WIDTH (PA * A_W),
      .CHUNKS(CHUNKS)
  ) u_a_rows (
      .clk       (clk),
      .rst       (rst),
      .in_data   (data_in_0),
      .in_valid  (data_in_0_valid),
      .in_ready  (data_in_0_ready),
      .row_valid (a_row_valid),
      .read_en   (issue),
      .read_chunk(issue_chunk),
      .read_last (row_issued),
      .read_data (a_chunk)
  );

  // ---- B side: a beat holds P1 elements of one row of B (the emitter converts B's stream to
  // the output's lanes), columns g*P1 .. g*P1+P1-1. Row k lands in memory k mod PA, at word
  // g*CHUNKS + k/PA of the matrix's bank (banks one after the other), so tile (g, chunk) is word
  // g*CHUNKS + chunk of every memory: one write per beat into one memory and one read of all PA
  // per tile, each memory a plain simple dual-port RAM (block or distributed RAM).
  localparam int RESIDUE_W = PA > 1 ? $clog2(PA) : 1;
  localparam int GW = GROUPS > 1 ? $clog2(GROUPS) : 1;
  localparam logic [RESIDUE_W-1:0] LAST_RESIDUE = RESIDUE_W'(PA - 1);
  localparam logic [GW-1:0] LAST_GROUP = GW'(GROUPS - 1);
  logic [1:0] b_bank_full;
  logic b_write_bank, b_read_bank;
  logic [BBW-1:0] b_write_beat;
  logic [RESIDUE_W-1:0] b_write_residue;  // row mod PA: the memory written
  logic [GW-1:0] b_write_group;           // the beat's columns / P1
  logic [TIW-1:0] b_row_address, b_write_address;  // the row's first word, the beat's word
  logic b_fire, b_matrix_done, b_row_done;

  assign data_in_1_ready = !b_bank_full[b_write_bank];
  assign b_fire = data_in_1_valid && data_in_1_ready;
  assign b_matrix_done = b_fire && b_write_beat == LAST_B_BEAT;
  assign b_row_done = b_write_group == LAST_GROUP;

  always_ff @(posedge clk) begin
    if (rst) begin
      b_write_bank <= 1'b0;
      b_write_beat <= '0;
      b_write_residue <= '0;
      b_write_group <= '0;
      b_row_address <= '0;
      b_write_address <= '0;
    end else if (b_fire) begin
      b_write_beat <= b_matrix_done ? '0 : b_write_beat + 1'b1;
      if (b_matrix_done) begin
        b_write_bank <= !b_write_bank;
        b_write_residue <= '0;
        b_write_group <= '0;
        b_row_address <= b_write_bank ? '0 : TIW'(TILES);
        b_write_address <= b_write_bank ? '0 : TIW'(TILES);
      end else if (b_row_done) begin
        // The next row: the next memory, and past the last one the next word.
        b_write_group <= '0;
        b_write_residue <= b_write_residue == LAST_RESIDUE ? '0 : b_write_residue + 1'b1;
        if (b_write_residue == LAST_RESIDUE) begin
          b_row_address <= b_row_address + 1'b1;
          b_write_address <= b_row_address + 1'b1;
        end else begin
          b_write_address <= b_row_address;
        end
      end else begin
        b_write_group <= b_write_group + 1'b1;
        b_write_address <= b_write_address + TIW'(CHUNKS);
      end
    end
  end

  // ---- Tiles: B's bank is read at each issue; a pair's B bank is freed after its last row.
  logic [MW-1:0] issue_row;
  logic [TIW-1:0] b_tile_index;
  logic [TILE_BITS-1:0] b_tile;  // B[chunk*PA + c][g*P1 + r] at lane r*PA + c

  assign pair_issued = row_issued && issue_row == LAST_ROW;
  assign b_tile_index = b_read_bank ? TIW'(TILES) + TIW'(issue_tile) : TIW'(issue_tile);

  always_ff @(posedge clk) begin
    if (rst) begin
      b_read_bank <= 1'b0;
      issue_row   <= '0;
    end else if (row_issued) begin
      issue_row <= pair_issued ? '0 : issue_row + 1'b1;
      if (pair_issued) b_read_bank <= !b_read_bank;
    end
  end

  // The bank's last read happens at the edge that frees it.
  always_ff @(posedge clk) begin
    if (rst) b_bank_full <= 2'b00;
    else begin
      if (b_matrix_done) b_bank_full[b_write_bank] <= 1'b1;
      if (pair_issued) b_bank_full[b_read_bank] <= 1'b0;
    end
  end

  for (genvar c = 0; c < PA; c++) begin : g_b_memory
    logic [P1*B_W-1:0] words[0:2*TILES-1];
    logic [P1*B_W-1:0] word;
    always_ff @(posedge clk) begin
      if (b_fire && b_write_residue == RESIDUE_W'(c)) words[b_write_address] <= data_in_1;
      if (issue) word <= words[b_tile_index];
    end
    for (genvar r = 0; r < P1; r++) begin : g_lane
      assign b_tile[(r*PA+c)*B_W+:B_W] = word[r*B_W+:B_W];
    end
  end

  mase_tile_accumulate #(
      .X_WIDTH      (A_W),
      .W_WIDTH      (B_W),
      .PRODUCT_FRAC (DATA_IN_0_PRECISION_1 + DATA_IN_1_PRECISION_1),
      .X_LANES      (PA),
      .OUT_LANES    (P1),
      .CHUNKS       (CHUNKS),
      .GROUPS       (GROUPS),
      .ACC_WIDTH    (ACCUMULATOR_WIDTH),
      .OUT_WIDTH    (DATA_OUT_0_PRECISION_0),
      .OUT_FRAC     (DATA_OUT_0_PRECISION_1),
      .OUT_SYMMETRIC(OUT_SYMMETRIC)
  ) u_tiles (
      .clk           (clk),
      .rst           (rst),
      .operands_ready(a_row_valid && b_bank_full[b_read_bank]),
      .issue         (issue),
      .issue_chunk   (issue_chunk),
      .issue_tile    (issue_tile),
      .row_issued    (row_issued),
      .x             (a_chunk),
      .w             (b_tile),
      .data_out      (data_out_0),
      .data_out_valid(data_out_0_valid),
      .data_out_ready(data_out_0_ready)
  );
endmodule
)sv"sv};
}  // namespace mase::verilog::rtl
