#pragma once
// mase_ring_rows: the row bookkeeping of a row ring, shared by mase_line_sweep and mase_pixel_sweep.
#include <mase/verilog/module_interface.hpp>

namespace mase::verilog::rtl {
inline constexpr module_parameter mase_ring_rows_parameters[] = {
    {"ROW_WORDS", "8"}, {"SLOTS", "4"}, {"MAP_ROWS", "8"}, {"SPAN", "3"},
};
inline constexpr module_port mase_ring_rows_ports[] = {
    {in, "clk"}, {in, "rst"},
    {in, "in_valid"},
    {out, "in_ready"}, {out, "in_fire"}, {out, "wr_addr", "(SLOTS * ROW_WORDS > 1 ? $clog2(SLOTS * ROW_WORDS) : 1)"},
    {in, "map_row", "32"}, {in, "top_row", "32", false, true},
    {out, "rows_ready", {}, false, false, "the current output row's rows are all in the ring"},
};
inline constexpr module_text mase_ring_rows{
    .name = "mase_ring_rows", .parameters = mase_ring_rows_parameters, .ports = mase_ring_rows_ports,
    .description = R"sv(// mase_ring_rows: the bookkeeping of a ring of SLOTS rows of ROW_WORDS words that a window sweep
// reads maps of MAP_ROWS rows from: where the next input word goes, whether it may go there, and
// whether the current output row's rows have arrived. Rows are numbered from reset across maps
// (32-bit counters, compared by signed difference); map_row is the current map's row 0, and the
// current output row reads rows top_row .. top_row + SPAN - 1 of it (those inside the map). The
// word being written belongs to row rows_in, in slot rows_in mod SLOTS, which holds row
// rows_in - SLOTS until then; so a word is taken only while that old row is before the first row
// the current output row (or a later one) reads.
)sv"sv,
    .body = R"sv(  localparam int NW = SLOTS * ROW_WORDS;
  localparam int MA = NW > 1 ? $clog2(NW) : 1;
  localparam int RWW = ROW_WORDS > 1 ? $clog2(ROW_WORDS) : 1;
  localparam logic signed [31:0] LIMIT = 32'(MAP_ROWS);

  logic [31:0] rows_in;     // rows fully written
  logic [RWW-1:0] wr_word;  // within the row
  logic signed [31:0] first_row, end_row;  // the output row's rows inside the map: first_row .. end_row - 1
  assign first_row = top_row < 0 ? '0 : (top_row > LIMIT ? LIMIT : top_row);
  assign end_row = top_row + 32'(SPAN) > LIMIT ? LIMIT : top_row + 32'(SPAN);
  assign in_ready = $signed(rows_in - (map_row + first_row)) < 32'(SLOTS);
  assign in_fire = in_valid && in_ready;
  assign rows_ready = $signed(rows_in - map_row) >= end_row;

  always_ff @(posedge clk) begin
    if (rst) begin
      rows_in <= '0;
      wr_addr <= '0;
      wr_word <= '0;
    end else if (in_fire) begin
      wr_addr <= wr_addr == MA'(NW - 1) ? '0 : wr_addr + MA'(1);
      if (wr_word == RWW'(ROW_WORDS - 1)) begin
        wr_word <= '0;
        rows_in <= rows_in + 32'd1;
      end else begin
        wr_word <= wr_word + 1'b1;
      end
    end
  end
endmodule
)sv"sv};
}  // namespace mase::verilog::rtl
