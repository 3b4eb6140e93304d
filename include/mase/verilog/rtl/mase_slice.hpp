#pragma once
// mase_slice: a slice whose kept elements are whole beats of the stream (step 1, bounds on beat
// boundaries): the kept beats pass through one output register as they arrive and the others are
// dropped, so nothing is buffered (mase_permute gathers any other slice).
#include <mase/verilog/module_interface.hpp>

namespace mase::verilog::rtl {
inline constexpr module_parameter mase_slice_parameters[] = {
    {"DATA_IN_0_PRECISION_0", "8"}, {"DATA_IN_0_PRECISION_1", "4"}, {"DATA_IN_0_PARALLELISM_DIM_0", "1"},
    {"DATA_OUT_0_PRECISION_0", "8"}, {"DATA_OUT_0_PRECISION_1", "4"}, {"DATA_OUT_0_PARALLELISM_DIM_0", "1"},
    {"PERIOD_BEATS", "2"}, {"FIRST_BEAT", "0"}, {"KEPT_BEATS", "1"},
};
inline constexpr module_port mase_slice_ports[] = {
    {in, "clk"}, {in, "rst"},
    {in, "data_in_0", "DATA_IN_0_PARALLELISM_DIM_0*DATA_IN_0_PRECISION_0", stream},
    {out, "data_out_0", "DATA_OUT_0_PARALLELISM_DIM_0*DATA_OUT_0_PRECISION_0", stream},
};
inline constexpr module_text mase_slice{
    .name = "mase_slice", .parameters = mase_slice_parameters, .ports = mase_slice_ports,
    .description = R"sv(// Of every PERIOD_BEATS beats of the input (one index of the sliced dimension's outer
// dimensions: the sliced dimension times everything after it), beats FIRST_BEAT ..
// FIRST_BEAT + KEPT_BEATS - 1 pass through the output register; the others are taken and
// dropped. Lanes and format are the input's. The output register refills in the cycle it drains.
/* verilator lint_off UNUSEDPARAM */
)sv"sv,
    .body = R"sv(  localparam int BEAT_W = PERIOD_BEATS > 1 ? $clog2(PERIOD_BEATS) : 1;
  localparam logic [BEAT_W-1:0] LAST_BEAT = BEAT_W'(PERIOD_BEATS - 1);
  // beat − FIRST_BEAT in one more bit: below KEPT_BEATS exactly for the kept beats (a beat
  // before them wraps to at least 2^COUNT_W − PERIOD_BEATS ≥ PERIOD_BEATS).
  localparam int COUNT_W = BEAT_W + 1;
  localparam logic [COUNT_W-1:0] FIRST = COUNT_W'(FIRST_BEAT);
  localparam logic [COUNT_W-1:0] KEPT = COUNT_W'(KEPT_BEATS);

  initial if (DATA_IN_0_PRECISION_0 != DATA_OUT_0_PRECISION_0 ||
              DATA_IN_0_PARALLELISM_DIM_0 != DATA_OUT_0_PARALLELISM_DIM_0 ||
              FIRST_BEAT + KEPT_BEATS > PERIOD_BEATS)
    $fatal(1, "mase_slice: inconsistent parameters");

  logic [BEAT_W-1:0] beat;  // within the period
  logic keep, can_load, fire;
  logic [COUNT_W-1:0] offset;
  assign offset = {1'b0, beat} - FIRST;
  assign keep = offset < KEPT;
  assign can_load = !data_out_0_valid || data_out_0_ready;
  assign data_in_0_ready = keep ? can_load : 1'b1;
  assign fire = data_in_0_valid && data_in_0_ready;

  always_ff @(posedge clk) begin
    if (rst) beat <= '0;
    else if (fire) beat <= beat == LAST_BEAT ? '0 : beat + 1'b1;
  end
  always_ff @(posedge clk) begin
    if (rst) data_out_0_valid <= 1'b0;
    else if (can_load) data_out_0_valid <= data_in_0_valid && keep;
  end
  always_ff @(posedge clk) begin
    if (can_load && data_in_0_valid && keep) data_out_0 <= data_in_0;
  end
endmodule
/* verilator lint_on UNUSEDPARAM */
)sv"sv};
}  // namespace mase::verilog::rtl
