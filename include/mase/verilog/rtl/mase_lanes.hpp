#pragma once
// mase_lanes: lane-width converter (IN_LANES -> OUT_LANES elements per beat, order kept) over
// an IN_LANES + OUT_LANES element shift buffer; one beat per cycle on the faster side.
#include <mase/verilog/module_interface.hpp>

namespace mase::verilog::rtl {
inline constexpr module_parameter mase_lanes_parameters[] = {
    {"WIDTH", "8"}, {"IN_LANES", "2"}, {"OUT_LANES", "4"},
};
inline constexpr module_port mase_lanes_ports[] = {
    {in, "clk"}, {in, "rst"},
    {in, "data_in", "IN_LANES*WIDTH", stream},
    {out, "data_out", "OUT_LANES*WIDTH", stream},
};
inline constexpr module_text mase_lanes{
    .name = "mase_lanes", .parameters = mase_lanes_parameters, .ports = mase_lanes_ports,
    .description = R"sv(// Lane-width converter: a stream of IN_LANES-element words becomes one of OUT_LANES-element
// words, element order preserved. Elements sit in a shift buffer, oldest in slot 0: an output
// beat takes slots 0..OUT_LANES-1 and shifts the rest down; an input beat is appended right
// after the elements kept. IN_LANES + OUT_LANES slots suffice for full throughput because the
// append may use the room freed by a pop in the same cycle (so data_in_ready depends on
// data_out_ready; data_out_valid comes from a register only).
)sv"sv,
    .body = R"sv(  localparam int SLOTS = IN_LANES + OUT_LANES;
  localparam int BUF_W = SLOTS * WIDTH;
  localparam int CW = $clog2(SLOTS + 1);
  localparam int SHIFT_W = $clog2(BUF_W + 1);
  localparam logic [CW-1:0] IN_N = CW'(IN_LANES);
  localparam logic [CW-1:0] OUT_N = CW'(OUT_LANES);
  localparam logic [IN_LANES*WIDTH-1:0] IN_ONES = '1;

  logic [BUF_W-1:0] elements;  // slot s is bits [s*WIDTH +: WIDTH]
  logic [CW-1:0] count;  // elements held
  logic [CW-1:0] kept;  // elements left after this cycle's pop
  logic [BUF_W-1:0] kept_elements, append_mask, append_data;
  logic [SHIFT_W-1:0] append_shift;
  logic push, pop;

  assign data_out = elements[OUT_LANES*WIDTH-1:0];
  assign data_out_valid = count >= OUT_N;
  assign pop = data_out_valid && data_out_ready;
  assign kept = pop ? count - OUT_N : count;
  // Room for IN_LANES more once the pop (if any) is taken into account.
  assign data_in_ready = kept <= OUT_N;
  assign push = data_in_valid && data_in_ready;

  assign kept_elements = pop ? elements >> (OUT_LANES * WIDTH) : elements;
  assign append_shift = SHIFT_W'(kept) * SHIFT_W'(WIDTH);
  assign append_mask = {{(OUT_LANES * WIDTH) {1'b0}}, IN_ONES} << append_shift;
  assign append_data = {{(OUT_LANES * WIDTH) {1'b0}}, data_in} << append_shift;

  always_ff @(posedge clk) begin
    if (push) elements <= (kept_elements & ~append_mask) | append_data;
    else elements <= kept_elements;
  end

  always_ff @(posedge clk) begin
    if (rst) count <= '0;
    else count <= kept + (push ? IN_N : '0);
  end
endmodule
)sv"sv};
}  // namespace mase::verilog::rtl
