#pragma once
// mase_fifo: first-word-fall-through FIFO with wrap-bit pointers; one push and one pop per
// cycle, and in_ready / out_valid come from registers only.
#include <string_view>

namespace mase::verilog::rtl {
inline constexpr std::string_view mase_fifo = R"sv(// First-word-fall-through FIFO: out_data shows the oldest word while out_valid is high.
// Pointers carry one extra wrap bit so full and empty are told apart without a counter;
// in_ready and out_valid come from registers only. DEPTH must be a power of two >= 2.
module mase_fifo #(
    parameter int WIDTH = 8,
    parameter int DEPTH = 4
) (
    input  logic             clk,
    input  logic             rst,
    input  logic [WIDTH-1:0] in_data,
    input  logic             in_valid,
    output logic             in_ready,
    output logic [WIDTH-1:0] out_data,
    output logic             out_valid,
    input  logic             out_ready
);
  localparam int PW = $clog2(DEPTH);

  logic [WIDTH-1:0] mem[0:DEPTH-1];
  logic [PW:0] wr_ptr, rd_ptr;
  logic push, pop;

  assign in_ready = !((wr_ptr[PW] != rd_ptr[PW]) && (wr_ptr[PW-1:0] == rd_ptr[PW-1:0]));
  assign out_valid = wr_ptr != rd_ptr;
  assign out_data = mem[rd_ptr[PW-1:0]];
  assign push = in_valid && in_ready;
  assign pop = out_valid && out_ready;

  always_ff @(posedge clk) begin
    if (push) mem[wr_ptr[PW-1:0]] <= in_data;
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      wr_ptr <= '0;
      rd_ptr <= '0;
    end else begin
      if (push) wr_ptr <= wr_ptr + 1'b1;
      if (pop) rd_ptr <= rd_ptr + 1'b1;
    end
  end
endmodule
)sv";
}  // namespace mase::verilog::rtl
