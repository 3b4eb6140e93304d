#pragma once
// mase_ring_rows: the write side of a row ring, shared by mase_line_sweep and mase_pixel_sweep.
#include <string_view>

namespace mase::verilog::rtl {
inline constexpr std::string_view mase_ring_rows = R"sv(// mase_ring_rows: where the next input word of a ring of SLOTS rows of ROW_WORDS words goes, and
// whether it may go there. Rows are numbered from reset (32-bit counters, compared by signed
// difference); the word being written belongs to row rows_in, in slot rows_in mod SLOTS, which holds
// row rows_in - SLOTS until then. So a word is taken only while that old row is before needed_row,
// the first row the sweep still reads.
module mase_ring_rows #(
  parameter int ROW_WORDS = 8,
  parameter int SLOTS = 4
) (
  input  logic clk,
  input  logic rst,
  input  logic in_valid,
  input  logic [31:0] needed_row,
  output logic in_ready,
  output logic in_fire,
  output logic [(SLOTS * ROW_WORDS > 1 ? $clog2(SLOTS * ROW_WORDS) : 1)-1:0] wr_addr,
  output logic [31:0] rows_in  // rows fully written
);
  localparam int NW = SLOTS * ROW_WORDS;
  localparam int MA = NW > 1 ? $clog2(NW) : 1;
  localparam int RWW = ROW_WORDS > 1 ? $clog2(ROW_WORDS) : 1;

  logic [RWW-1:0] wr_word;  // within the row
  assign in_ready = $signed(rows_in - needed_row) < 32'(SLOTS);
  assign in_fire = in_valid && in_ready;

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
)sv";
}  // namespace mase::verilog::rtl
