#pragma once
// mase_row_buffer: two-bank (ping-pong) buffer for a stream's rows, so the next row loads
// while the reader works through this one (mase_linear's input, mase_matmul's A).
#include <mase/verilog/module_interface.hpp>

namespace mase::verilog::rtl {
inline constexpr module_parameter mase_row_buffer_parameters[] = {
    {"WIDTH", "16"}, {"CHUNKS", "2"},
};
inline constexpr module_port mase_row_buffer_ports[] = {
    {in, "clk"}, {in, "rst"},
    {in, "in_data", "WIDTH"}, {in, "in_valid"},
    {out, "in_ready"},
    {out, "row_valid", {}, false, false, "the read bank holds a row"},
    {in, "read_en"}, {in, "read_chunk", "(CHUNKS > 1 ? $clog2(CHUNKS) : 1)"},
    {in, "read_last", {}, false, false, "this read frees the bank"},
    {out, "read_data", "WIDTH", false, false, "registered: next cycle"},
};
inline constexpr module_text mase_row_buffer{
    .name = "mase_row_buffer", .parameters = mase_row_buffer_parameters, .ports = mase_row_buffer_ports,
    .description = R"sv(// Two-bank (ping-pong) buffer for the rows of a stream: one bank fills beat by beat while the
// reader works through the other, so the next row loads while this one computes. A bank is
// handed to the reader when its row is complete and freed by the reader's last read.
)sv"sv,
    .body = R"sv(  localparam int KW = CHUNKS > 1 ? $clog2(CHUNKS) : 1;
  localparam logic [KW-1:0] LAST_CHUNK = KW'(CHUNKS - 1);

  logic [WIDTH-1:0] banks[0:(2<<KW)-1];  // address {bank, chunk}
  logic [1:0] bank_full, bank_full_next;
  logic write_bank, read_bank, write_bank_next, read_bank_next;
  logic [KW-1:0] write_chunk;
  logic in_fire, in_row_done, read_done;

  assign in_fire = in_valid && in_ready;
  assign in_row_done = in_fire && write_chunk == LAST_CHUNK;
  assign read_done = read_en && read_last;

  always_ff @(posedge clk) begin
    if (in_fire) banks[{write_bank, write_chunk}] <= in_data;
  end

  always_ff @(posedge clk) begin
    if (read_en) read_data <= banks[{read_bank, read_chunk}];
  end

  // The bank's last read happens at the edge that frees it. in_ready and row_valid are
  // registers, computed from the next state, so neither handshake is a path through this logic.
  always_comb begin
    bank_full_next = bank_full;
    if (in_row_done) bank_full_next[write_bank] = 1'b1;
    if (read_done) bank_full_next[read_bank] = 1'b0;
  end
  assign write_bank_next = in_row_done ? !write_bank : write_bank;
  assign read_bank_next = read_done ? !read_bank : read_bank;

  always_ff @(posedge clk) begin
    if (rst) begin
      write_bank  <= 1'b0;
      write_chunk <= '0;
      read_bank   <= 1'b0;
      bank_full   <= 2'b00;
      in_ready    <= 1'b1;
      row_valid   <= 1'b0;
    end else begin
      if (in_fire) write_chunk <= in_row_done ? '0 : write_chunk + 1'b1;
      write_bank <= write_bank_next;
      read_bank  <= read_bank_next;
      bank_full  <= bank_full_next;
      in_ready   <= !bank_full_next[write_bank_next];
      row_valid  <= bank_full_next[read_bank_next];
    end
  end
endmodule
)sv"sv};
}  // namespace mase::verilog::rtl
