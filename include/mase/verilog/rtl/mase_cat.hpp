#pragma once
// mase_cat: torch.cat of two operands along a dimension after the batch, as a stream: each sample
// is chunks of operand 0 and operand 1 in turn, so the component passes CHUNK_0_BEATS beats of
// one, then CHUNK_1_BEATS of the other, through one output register stage. Either operand may be
// a constant (a table of its words: ViT's class token before the patch embeddings).
#include <mase/verilog/module_interface.hpp>

namespace mase::verilog::rtl {
inline constexpr module_parameter mase_cat_parameters[] = {
    {"DATA_IN_0_PRECISION_0", "8"}, {"DATA_IN_0_PRECISION_1", "4"}, {"DATA_IN_1_PRECISION_0", "8"},
    {"DATA_IN_1_PRECISION_1", "4"}, {"DATA_OUT_0_PRECISION_0", "8"}, {"DATA_OUT_0_PRECISION_1", "4"},
    {"DATA_OUT_0_PARALLELISM_DIM_0", "1"}, {"CHUNK_0_BEATS", "1"}, {"CHUNK_1_BEATS", "1"}, {"CONSTANT_INPUT", "-1"},
    {"TABLE_BEATS", "1"}, {"TABLE_MEMFILE", "\"\"", ""},
};
inline constexpr module_port mase_cat_ports[] = {
    {in, "clk"}, {in, "rst"},
    {in, "data_in_0", "DATA_OUT_0_PARALLELISM_DIM_0*DATA_IN_0_PRECISION_0", stream},
    {in, "data_in_1", "DATA_OUT_0_PARALLELISM_DIM_0*DATA_IN_1_PRECISION_0", stream},
    {out, "data_out_0", "DATA_OUT_0_PARALLELISM_DIM_0*DATA_OUT_0_PRECISION_0", stream},
};
inline constexpr module_text mase_cat{.name = "mase_cat", .parameters = mase_cat_parameters, .ports = mase_cat_ports,
    .description = R"sv(// Concatenation of two operands of one format, LANES elements per beat
// (DATA_OUT_0_PARALLELISM_DIM_0). Each sample of the result is, repeated, CHUNK_0_BEATS beats of
// operand 0 and then CHUNK_1_BEATS beats of operand 1 (the elements each contributes per index of
// the dimensions before the joined one). CONSTANT_INPUT (0 or 1): that operand is a constant whose
// TABLE_BEATS words per sample TABLE_MEMFILE holds (lane 0 lowest), read one beat ahead into a
// register (a synchronous read); its ports are unused. The output register refills in the cycle
// it drains.
/* verilator lint_off UNUSEDSIGNAL */
/* verilator lint_off UNUSEDPARAM */
)sv"sv,
    .body = R"sv(  localparam int LANES = DATA_OUT_0_PARALLELISM_DIM_0;
  localparam int W = DATA_OUT_0_PRECISION_0;
  localparam int LONGEST = CHUNK_0_BEATS > CHUNK_1_BEATS ? CHUNK_0_BEATS : CHUNK_1_BEATS;
  localparam int BEAT_W = LONGEST > 1 ? $clog2(LONGEST) : 1;
  localparam logic [BEAT_W-1:0] LAST_0 = BEAT_W'(CHUNK_0_BEATS - 1);
  localparam logic [BEAT_W-1:0] LAST_1 = BEAT_W'(CHUNK_1_BEATS - 1);
  localparam int TABLE_AW = TABLE_BEATS > 1 ? $clog2(TABLE_BEATS) : 1;
  localparam logic [TABLE_AW-1:0] LAST_TABLE_BEAT = TABLE_AW'(TABLE_BEATS - 1);

  initial if (DATA_IN_0_PRECISION_0 != W || DATA_IN_1_PRECISION_0 != W)
    $fatal(1, "mase_cat: both operands must have the result's width");

  // Which operand the current chunk comes from, and the beat within the chunk.
  logic part, can_load, fire, selected_valid, last_of_chunk;
  logic [BEAT_W-1:0] beat;
  logic [LANES*W-1:0] a_word, b_word;
  logic a_valid, b_valid;
  assign can_load = !data_out_0_valid || data_out_0_ready;
  assign selected_valid = part ? b_valid : a_valid;
  assign fire = can_load && selected_valid;
  assign last_of_chunk = beat == (part ? LAST_1 : LAST_0);
  always_ff @(posedge clk) begin
    if (rst) begin
      part <= 1'b0;
      beat <= '0;
    end else if (fire) begin
      beat <= last_of_chunk ? '0 : beat + 1'b1;
      if (last_of_chunk) part <= !part;
    end
  end

  // The constant operand's table, read one beat ahead.
  logic [LANES*W-1:0] table_word;
  if (CONSTANT_INPUT >= 0) begin : g_table
    logic [LANES*W-1:0] table_mem[0:TABLE_BEATS-1];
    // No file by default: yosys elaborates every module with its defaults when reading it.
    initial if (TABLE_MEMFILE != "") $readmemh(TABLE_MEMFILE, table_mem);
    logic [TABLE_AW-1:0] table_beat, next_beat, table_address;
    logic advance;
    assign advance = fire && part == (CONSTANT_INPUT == 1);
    assign next_beat = table_beat == LAST_TABLE_BEAT ? '0 : table_beat + 1'b1;
    assign table_address = rst ? '0 : advance ? next_beat : table_beat;
    always_ff @(posedge clk) begin
      if (rst) table_beat <= '0;
      else if (advance) table_beat <= next_beat;
      table_word <= table_mem[table_address];
    end
  end else begin : g_no_table
    assign table_word = '0;
  end

  if (CONSTANT_INPUT == 0) begin : g_a_constant
    assign a_word = table_word;
    assign a_valid = 1'b1;
    assign data_in_0_ready = 1'b0;
  end else begin : g_a_stream
    assign a_word = data_in_0;
    assign a_valid = data_in_0_valid;
    assign data_in_0_ready = can_load && !part;
  end
  if (CONSTANT_INPUT == 1) begin : g_b_constant
    assign b_word = table_word;
    assign b_valid = 1'b1;
    assign data_in_1_ready = 1'b0;
  end else begin : g_b_stream
    assign b_word = data_in_1;
    assign b_valid = data_in_1_valid;
    assign data_in_1_ready = can_load && part;
  end

  always_ff @(posedge clk) begin
    if (rst) data_out_0_valid <= 1'b0;
    else if (can_load) data_out_0_valid <= selected_valid;
  end
  always_ff @(posedge clk) begin
    if (fire) data_out_0 <= part ? b_word : a_word;
  end
endmodule
/* verilator lint_on UNUSEDPARAM */
/* verilator lint_on UNUSEDSIGNAL */
)sv"sv};
}  // namespace mase::verilog::rtl
