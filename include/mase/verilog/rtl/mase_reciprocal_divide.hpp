#pragma once
// mase_reciprocal_divide: the division of eval/mean_rule.hpp, per lane and combinational: an exact
// sum divided by a constant with one multiply and one shift, floored, then saturated. mase_mean and
// mase_pool2d's average end in it.
#include <mase/verilog/module_interface.hpp>

namespace mase::verilog::rtl {
inline constexpr module_parameter mase_reciprocal_divide_parameters[] = {
    {"SUM_WIDTH", "10"}, {"NUMERATOR_SHIFT", "0"}, {"NUMERATOR_WIDTH", "10"}, {"MULTIPLIER_WIDTH", "1"},
    {"SHIFT", "0"}, {"OFFSET", "64'd0", "logic [63:0]"}, {"OFFSET_QUOTIENT", "64'd0", "logic [63:0]"},
    {"MULTIPLIER", "64'd1", "logic [63:0]"}, {"OUT_WIDTH", "8"}, {"OUT_FRAC", "4"}, {"OUT_SYMMETRIC", "0"},
    {"LANES", "1"},
};
inline constexpr module_port mase_reciprocal_divide_ports[] = {
    {in, "data_in", "LANES*SUM_WIDTH"},
    {out, "data_out", "LANES*OUT_WIDTH"},
};
inline constexpr module_text mase_reciprocal_divide{
    .name = "mase_reciprocal_divide", .parameters = mase_reciprocal_divide_parameters, .ports = mase_reciprocal_divide_ports,
    .description = R"sv(// y = saturate(floor(S * 2^NUMERATOR_SHIFT / D)) for each lane's exact sum S, as
// eval/mean_rule.hpp defines it, computed as ((S << NUMERATOR_SHIFT) + OFFSET) * MULTIPLIER >> SHIFT,
// less OFFSET_QUOTIENT: OFFSET makes the numerator non-negative, and the rule chose MULTIPLIER and
// SHIFT so that the product's floor is the exact quotient for every numerator of SUM_WIDTH-bit sums.
)sv"sv,
    .body = R"sv(  // The shifted numerator and the 64-bit offsets, with a sign bit above both.
  localparam int NW = SUM_WIDTH + NUMERATOR_SHIFT;
  localparam int WIDE = (NW > 64 ? NW : 64) + 1;
  localparam int PRODUCT_WIDTH = NUMERATOR_WIDTH + MULTIPLIER_WIDTH;
  localparam int RESULT_WIDTH = (PRODUCT_WIDTH > 64 ? PRODUCT_WIDTH : 64) + 2;

  logic [LANES*RESULT_WIDTH-1:0] quotients;
  for (genvar l = 0; l < LANES; l++) begin : g_lane
    logic signed [WIDE-1:0] numerator;
    logic [NUMERATOR_WIDTH-1:0] positive;
    logic [PRODUCT_WIDTH-1:0] product, quotient;
    assign numerator = WIDE'($signed(data_in[l*SUM_WIDTH+:SUM_WIDTH])) <<< NUMERATOR_SHIFT;
    assign positive = NUMERATOR_WIDTH'(numerator + WIDE'(OFFSET));  // in [0, 2^NUMERATOR_WIDTH)
    assign product = PRODUCT_WIDTH'(positive) * PRODUCT_WIDTH'(MULTIPLIER);
    assign quotient = product >> SHIFT;
    assign quotients[l*RESULT_WIDTH+:RESULT_WIDTH] = RESULT_WIDTH'(quotient) - RESULT_WIDTH'(OFFSET_QUOTIENT);
  end

  mase_cast #(
      .IN_WIDTH (RESULT_WIDTH),
      .IN_FRAC  (OUT_FRAC),
      .OUT_WIDTH(OUT_WIDTH),
      .OUT_FRAC (OUT_FRAC),
      .SYMMETRIC(OUT_SYMMETRIC),
      .LANES    (LANES)
  ) u_saturate (
      .data_in (quotients),
      .data_out(data_out)
  );
endmodule
)sv"sv};
}  // namespace mase::verilog::rtl
