#pragma once
// mase_rom: a ROM initialised by $readmemh with a registered read, so synthesis can map it
// to block RAM; the default (no file) keeps yosys's default elaboration from failing.
#include <string_view>

namespace mase::verilog::rtl {
inline constexpr std::string_view mase_rom = R"sv(// Synchronous-read ROM initialised from a hex file (DEPTH lines of ceil(WIDTH/4) hex digits);
// the registered read lets synthesis map it to block RAM.
module mase_rom #(
    parameter int WIDTH = 8,
    parameter int DEPTH = 4,
    parameter MEMFILE = ""
) (
    input  logic                                   clk,
    input  logic                                   en,
    input  logic [(DEPTH > 1 ? $clog2(DEPTH) : 1)-1:0] addr,
    output logic [WIDTH-1:0]                       q
);
  logic [WIDTH-1:0] mem[0:DEPTH-1];
  // yosys elaborates every module with its defaults when reading it, so the default (no file)
  // must not try to open one.
  initial if (MEMFILE != "") $readmemh(MEMFILE, mem);

  if (DEPTH > 1) begin : g_rom
    always_ff @(posedge clk) if (en) q <= mem[addr];
  end else begin : g_single
    // A one-word ROM has nothing to address; the port exists only for a uniform interface.
    logic unused_addr;
    assign unused_addr = addr[0];
    always_ff @(posedge clk) if (en) q <= mem[0];
  end
endmodule
)sv";
}  // namespace mase::verilog::rtl
