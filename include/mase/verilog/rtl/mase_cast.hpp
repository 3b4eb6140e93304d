#pragma once
// mase_cast: MASE's floor-and-saturate fixed-point cast, per lane, exact at any width
// (saturation is read from the top bits of a widened value, not from wide constants).
#include <mase/verilog/module_interface.hpp>

namespace mase::verilog::rtl {
inline constexpr module_parameter mase_cast_parameters[] = {
    {"IN_WIDTH", "16"}, {"IN_FRAC", "8"}, {"OUT_WIDTH", "8"}, {"OUT_FRAC", "4"}, {"SYMMETRIC", "0"}, {"LANES", "1"},
};
inline constexpr module_port mase_cast_ports[] = {
    {in, "data_in", "LANES*IN_WIDTH"},
    {out, "data_out", "LANES*OUT_WIDTH"},
};
inline constexpr module_text mase_cast{
    .name = "mase_cast", .parameters = mase_cast_parameters, .ports = mase_cast_ports,
    .description = R"sv(// Floor-and-saturate fixed-point cast (MASE's fixed_signed_cast), applied per lane.
// The shift is done on a vector wider than anything it can hold, so it is exact; saturation
// is detected from the top bits instead of wide constant compares, so any width is exact.
// Requires OUT_WIDTH >= 2.
)sv"sv,
    .body = R"sv(  localparam int LSHIFT = OUT_FRAC > IN_FRAC ? OUT_FRAC - IN_FRAC : 0;
  localparam int RSHIFT = IN_FRAC > OUT_FRAC ? IN_FRAC - OUT_FRAC : 0;
  localparam int SHIFTED_WIDTH = IN_WIDTH + LSHIFT;
  // One bit more than both the shifted value and the output: the fit test needs two top bits.
  localparam int WIDE = (SHIFTED_WIDTH > OUT_WIDTH ? SHIFTED_WIDTH : OUT_WIDTH) + 1;
  localparam logic [OUT_WIDTH-1:0] MIN_CODE = {1'b1, {(OUT_WIDTH - 1) {1'b0}}};
  localparam logic [OUT_WIDTH-1:0] MAX_CODE = ~MIN_CODE;
  // Symmetric formats clamp at -MAX instead of -MAX-1.
  localparam logic [OUT_WIDTH-1:0] LOW_CODE =
      SYMMETRIC != 0 ? (MIN_CODE | {{(OUT_WIDTH - 1) {1'b0}}, 1'b1}) : MIN_CODE;

  for (genvar lane = 0; lane < LANES; lane++) begin : g_lane
    logic [IN_WIDTH-1:0] value;
    logic signed [WIDE-1:0] extended, shifted;
    logic [WIDE-OUT_WIDTH:0] top;  // must all equal the sign bit for the value to fit
    logic fits, negative;
    logic [OUT_WIDTH-1:0] low_bits;
    assign value = data_in[lane*IN_WIDTH+:IN_WIDTH];
    assign extended = {{(WIDE - IN_WIDTH) {value[IN_WIDTH-1]}}, value};
    assign shifted = RSHIFT > 0 ? extended >>> RSHIFT : extended <<< LSHIFT;
    assign top = shifted[WIDE-1:OUT_WIDTH-1];
    assign low_bits = shifted[OUT_WIDTH-1:0];
    assign negative = top[WIDE-OUT_WIDTH];
    assign fits = (&top) || !(|top);
    assign data_out[lane*OUT_WIDTH+:OUT_WIDTH] =
        !fits ? (negative ? LOW_CODE : MAX_CODE) :
        (low_bits == MIN_CODE) ? LOW_CODE : low_bits;
  end
endmodule
)sv"sv};
}  // namespace mase::verilog::rtl
