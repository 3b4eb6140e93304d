#pragma once
// mase_rom: a ROM initialised by $readmemh with a registered read, so synthesis can map it
// to block RAM; the default (no file) keeps yosys's default elaboration from failing.
#include <mase/verilog/module_interface.hpp>

namespace mase::verilog::rtl {
inline constexpr module_parameter mase_rom_parameters[] = {
    {"WIDTH", "8"}, {"DEPTH", "4"}, {"MEMFILE", "\"\"", ""},
};
inline constexpr module_port mase_rom_ports[] = {
    {in, "clk"},
    {in, "en"}, {in, "addr", "(DEPTH > 1 ? $clog2(DEPTH) : 1)"},
    {out, "q", "WIDTH"},
};
inline constexpr module_text mase_rom{.name = "mase_rom", .parameters = mase_rom_parameters, .ports = mase_rom_ports,
    .description = R"sv(// Synchronous-read ROM initialised from a hex file (DEPTH lines of ceil(WIDTH/4) hex digits);
// the registered read lets synthesis map it to block RAM.
)sv"sv,
    .body = R"sv(  logic [WIDTH-1:0] mem[0:DEPTH-1];
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
)sv"sv};
}  // namespace mase::verilog::rtl
