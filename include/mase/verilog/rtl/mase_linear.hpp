#pragma once
// mase_linear: streaming Y = X W^T + b, exact accumulation and one cast; a ping-pong input
// buffer and one P1 x P0 weight tile per cycle give GROUPS*CHUNKS cycles per row.
#include <mase/verilog/module_interface.hpp>

namespace mase::verilog::rtl {
inline constexpr module_parameter mase_linear_parameters[] = {
    {"DATA_IN_0_PRECISION_0", "8"}, {"DATA_IN_0_PRECISION_1", "4"}, {"DATA_IN_0_TENSOR_SIZE_DIM_0", "4"},
    {"DATA_IN_0_PARALLELISM_DIM_0", "2"}, {"WEIGHT_PRECISION_0", "8"}, {"WEIGHT_PRECISION_1", "4"},
    {"WEIGHT_TENSOR_SIZE_DIM_0", "4"}, {"WEIGHT_TENSOR_SIZE_DIM_1", "4"}, {"WEIGHT_PARALLELISM_DIM_0", "2"},
    {"WEIGHT_PARALLELISM_DIM_1", "2"}, {"HAS_BIAS", "1"}, {"ACCUMULATOR_WIDTH", "20"},
    {"DATA_OUT_0_PRECISION_0", "8"}, {"DATA_OUT_0_PRECISION_1", "4"}, {"DATA_OUT_0_TENSOR_SIZE_DIM_0", "4"},
    {"DATA_OUT_0_PARALLELISM_DIM_0", "2"}, {"OUT_SYMMETRIC", "0"}, {"WEIGHT_MEMFILE", "\"\"", ""},
    {"BIAS_MEMFILE", "\"\"", ""},
};
inline constexpr module_port mase_linear_ports[] = {
    {in, "clk"}, {in, "rst"},
    {in, "data_in_0", "DATA_IN_0_PARALLELISM_DIM_0*DATA_IN_0_PRECISION_0", stream},
    {out, "data_out_0", "DATA_OUT_0_PARALLELISM_DIM_0*DATA_OUT_0_PRECISION_0", stream},
};
inline constexpr module_text mase_linear{
    .name = "mase_linear", .parameters = mase_linear_parameters, .ports = mase_linear_ports,
    .description = R"sv(// Streaming fully connected layer Y = X * W^T + b with exact accumulation and one output cast.
// Rows land in a two-bank buffer (mase_row_buffer) so the next row loads while this one
// computes; every cycle mase_tile_accumulate issues one P1 x P0 tile, whose weights are read
// from ROM, and multiply-accumulates it down its pipeline, so a row takes GROUPS*CHUNKS cycles.
)sv"sv,
    .body = R"sv(  localparam int XW = DATA_IN_0_PRECISION_0;
  localparam int WW = WEIGHT_PRECISION_0;
  localparam int IN = DATA_IN_0_TENSOR_SIZE_DIM_0;
  localparam int OUT = WEIGHT_TENSOR_SIZE_DIM_1;
  localparam int P0 = DATA_IN_0_PARALLELISM_DIM_0;
  localparam int P1 = WEIGHT_PARALLELISM_DIM_1;
  localparam int CHUNKS = IN / P0;
  localparam int GROUPS = OUT / P1;
  localparam int TILES = GROUPS * CHUNKS;
  localparam int KW = CHUNKS > 1 ? $clog2(CHUNKS) : 1;
  localparam int TW = TILES > 1 ? $clog2(TILES) : 1;

  // The MASE interface repeats some sizes; they must agree (iverilog/Verilator stop at time 0,
  // yosys refuses the unknown task when the condition is constant-true).
  localparam bit PARAMS_CONSISTENT = WEIGHT_TENSOR_SIZE_DIM_0 == IN &&
      WEIGHT_PARALLELISM_DIM_0 == P0 && DATA_OUT_0_TENSOR_SIZE_DIM_0 == OUT &&
      DATA_OUT_0_PARALLELISM_DIM_0 == P1 && IN % P0 == 0 && OUT % P1 == 0;
  initial if (!PARAMS_CONSISTENT) $fatal(1, "mase_linear: inconsistent size parameters");

  logic issue, row_issued, row_valid;
  logic [KW-1:0] issue_chunk;
  logic [TW-1:0] issue_tile;
  logic [P0*XW-1:0] x_chunk;
  logic [P1*P0*WW-1:0] weight_tile;

  mase_row_buffer #(
      .WIDTH (P0 * XW),
      .CHUNKS(CHUNKS)
  ) u_rows (
      .clk       (clk),
      .rst       (rst),
      .in_data   (data_in_0),
      .in_valid  (data_in_0_valid),
      .in_ready  (data_in_0_ready),
      .row_valid (row_valid),
      .read_en   (issue),
      .read_chunk(issue_chunk),
      .read_last (row_issued),
      .read_data (x_chunk)
  );

  mase_rom #(
      .WIDTH  (P1 * P0 * WW),
      .DEPTH  (TILES),
      .MEMFILE(WEIGHT_MEMFILE)
  ) u_weight_rom (
      .clk (clk),
      .en  (issue),
      .addr(issue_tile),
      .q   (weight_tile)
  );

  mase_tile_accumulate #(
      .X_WIDTH      (XW),
      .W_WIDTH      (WW),
      .PRODUCT_FRAC (DATA_IN_0_PRECISION_1 + WEIGHT_PRECISION_1),
      .X_LANES      (P0),
      .OUT_LANES    (P1),
      .CHUNKS       (CHUNKS),
      .GROUPS       (GROUPS),
      .ACC_WIDTH    (ACCUMULATOR_WIDTH),
      .HAS_BIAS     (HAS_BIAS),
      .BIAS_MEMFILE (BIAS_MEMFILE),
      .OUT_WIDTH    (DATA_OUT_0_PRECISION_0),
      .OUT_FRAC     (DATA_OUT_0_PRECISION_1),
      .OUT_SYMMETRIC(OUT_SYMMETRIC)
  ) u_tiles (
      .clk           (clk),
      .rst           (rst),
      .operands_ready(row_valid),
      .issue         (issue),
      .issue_chunk   (issue_chunk),
      .issue_tile    (issue_tile),
      .row_issued    (row_issued),
      .x             (x_chunk),
      .w             (weight_tile),
      .data_out      (data_out_0),
      .data_out_valid(data_out_0_valid),
      .data_out_ready(data_out_0_ready)
  );
endmodule
)sv"sv};
}  // namespace mase::verilog::rtl
