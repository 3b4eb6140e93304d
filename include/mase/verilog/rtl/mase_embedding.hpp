#pragma once
// mase_embedding: nn.Embedding as a ROM read: each row number of the input stream streams that
// row of the table out, a word of lanes per beat.
#include <mase/verilog/module_interface.hpp>

namespace mase::verilog::rtl {
inline constexpr module_parameter mase_embedding_parameters[] = {
    {"DATA_IN_0_PRECISION_0", "8"}, {"DATA_IN_0_PARALLELISM_DIM_0", "1"}, {"DATA_OUT_0_PRECISION_0", "8"},
    {"DATA_OUT_0_PARALLELISM_DIM_0", "1"}, {"ROWS", "4"}, {"ROW_LENGTH", "4"}, {"WEIGHT_MEMFILE", "\"\"", ""},
};
inline constexpr module_port mase_embedding_ports[] = {
    {in, "clk"}, {in, "rst"},
    {in, "data_in_0", "DATA_IN_0_PARALLELISM_DIM_0*DATA_IN_0_PRECISION_0", stream},
    {out, "data_out_0", "DATA_OUT_0_PARALLELISM_DIM_0*DATA_OUT_0_PRECISION_0", stream},
};
inline constexpr module_text mase_embedding{
    .name = "mase_embedding", .parameters = mase_embedding_parameters, .ports = mase_embedding_ports,
    .description = R"sv(// Looks up rows of a table (nn.Embedding): each row number of the input stream (up to
// DATA_IN_0_PARALLELISM_DIM_0 per beat, lane 0 first) sends its row of ROW_LENGTH elements,
// DATA_OUT_0_PARALLELISM_DIM_0 per beat. WEIGHT_MEMFILE holds the table row after row, a word
// of lanes per address (lane 0 lowest). The ROM is read into the output register (a
// synchronous read, so the table can be a block RAM); an input beat is taken when its last row
// number's last beat leaves.
)sv"sv,
    .body = R"sv(  localparam int IW = DATA_IN_0_PRECISION_0;
  localparam int IDS = DATA_IN_0_PARALLELISM_DIM_0;
  localparam int W = DATA_OUT_0_PRECISION_0;
  localparam int LANES = DATA_OUT_0_PARALLELISM_DIM_0;
  localparam int BEATS = ROW_LENGTH / LANES;
  localparam int DEPTH = ROWS * BEATS;
  localparam int AW = DEPTH > 1 ? $clog2(DEPTH) : 1;
  localparam int BW = BEATS > 1 ? $clog2(BEATS) : 1;
  localparam int SW = IDS > 1 ? $clog2(IDS) : 1;
  localparam logic [BW-1:0] LAST_BEAT = BW'(BEATS - 1);
  localparam logic [SW-1:0] LAST_ID = SW'(IDS - 1);

  initial if (ROW_LENGTH % LANES != 0) $fatal(1, "mase_embedding: lanes must divide the row");

  logic [LANES*W-1:0] rom[0:DEPTH-1];
  // No file by default: yosys elaborates every module with its defaults when reading it.
  initial if (WEIGHT_MEMFILE != "") $readmemh(WEIGHT_MEMFILE, rom);

  logic [SW-1:0] id_slot;  // which row number of the input beat
  logic [BW-1:0] beat;     // which beat of its row
  logic [IW-1:0] row;
  logic [AW-1:0] address;
  logic can_load, fire, last;
  assign row = data_in_0[id_slot*IW+:IW];
  // Row numbers are in [0, ROWS) (the evaluator refuses others), so they read as unsigned.
  assign address = AW'(row) * AW'(BEATS) + AW'(beat);
  assign can_load = !data_out_0_valid || data_out_0_ready;
  assign fire = can_load && data_in_0_valid;
  assign last = beat == LAST_BEAT && id_slot == LAST_ID;
  assign data_in_0_ready = can_load && last;

  always_ff @(posedge clk) begin
    if (rst) begin
      data_out_0_valid <= 1'b0;
      beat <= '0;
      id_slot <= '0;
    end else begin
      if (can_load) data_out_0_valid <= data_in_0_valid;
      if (fire) begin
        beat <= beat == LAST_BEAT ? '0 : beat + 1'b1;
        if (beat == LAST_BEAT) id_slot <= id_slot == LAST_ID ? '0 : id_slot + 1'b1;
      end
    end
  end
  always_ff @(posedge clk) begin
    if (fire) data_out_0 <= rom[address];
  end
endmodule
)sv"sv};
}  // namespace mase::verilog::rtl
