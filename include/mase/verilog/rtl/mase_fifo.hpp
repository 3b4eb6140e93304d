#pragma once
// mase_fifo: first-word-fall-through FIFO of any depth, with wrap-bit pointers; one push and one
// pop per cycle, and in_ready / out_valid come from registers only.
#include <mase/verilog/module_interface.hpp>

namespace mase::verilog::rtl {
inline constexpr module_parameter mase_fifo_parameters[] = {
    {"WIDTH", "8"}, {"DEPTH", "4"},
};
inline constexpr module_port mase_fifo_ports[] = {
    {in, "clk"}, {in, "rst"},
    {in, "in_data", "WIDTH"}, {in, "in_valid"},
    {out, "in_ready"}, {out, "out_data", "WIDTH"}, {out, "out_valid"},
    {in, "out_ready"},
};
inline constexpr module_text mase_fifo{
    .name = "mase_fifo", .parameters = mase_fifo_parameters, .ports = mase_fifo_ports,
    .description = R"sv(// First-word-fall-through FIFO: out_data shows the oldest word while out_valid is high.
// Each pointer counts 0 .. DEPTH-1 and flips a wrap bit when it wraps, so full and empty are told
// apart without a counter and DEPTH need not be a power of two (a fork's FIFO holds exactly what
// its branch needs); in_ready and out_valid come from registers only. DEPTH >= 1.
)sv"sv,
    .body = R"sv(  localparam int PW = DEPTH > 1 ? $clog2(DEPTH) : 1;
  localparam logic [PW-1:0] LAST = PW'(DEPTH - 1);

  logic [WIDTH-1:0] mem[0:DEPTH-1];
  logic [PW-1:0] wr_index, rd_index;
  logic wr_wrap, rd_wrap;
  logic push, pop;

  assign in_ready = !(wr_wrap != rd_wrap && wr_index == rd_index);
  assign out_valid = !(wr_wrap == rd_wrap && wr_index == rd_index);
  assign out_data = mem[rd_index];
  assign push = in_valid && in_ready;
  assign pop = out_valid && out_ready;

  always_ff @(posedge clk) begin
    if (push) mem[wr_index] <= in_data;
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      wr_index <= '0;
      rd_index <= '0;
      wr_wrap <= 1'b0;
      rd_wrap <= 1'b0;
    end else begin
      if (push) begin
        wr_index <= wr_index == LAST ? '0 : wr_index + 1'b1;
        if (wr_index == LAST) wr_wrap <= !wr_wrap;
      end
      if (pop) begin
        rd_index <= rd_index == LAST ? '0 : rd_index + 1'b1;
        if (rd_index == LAST) rd_wrap <= !rd_wrap;
      end
    end
  end
endmodule
)sv"sv};
}  // namespace mase::verilog::rtl
