#pragma once
// mase_softmax: softmax over rows of a stream, the integer rule of eval/fixed_functions.hpp
// (softmax_rule) step for step: the row's maximum, an exp table indexed by the distance from it,
// the exact sum, and a floor division per element.
#include <mase/verilog/module_interface.hpp>

namespace mase::verilog::rtl {
inline constexpr module_parameter mase_softmax_parameters[] = {
    {"DATA_IN_0_PRECISION_0", "8"}, {"DATA_IN_0_PARALLELISM_DIM_0", "1"}, {"DATA_OUT_0_PRECISION_0", "8"},
    {"DATA_OUT_0_PRECISION_1", "7"}, {"ROW_LENGTH", "4"}, {"EXP_FRAC", "10"}, {"EXP_TABLE_SIZE", "16"},
    {"EXP_MEMFILE", "\"\"", ""},
};
inline constexpr module_port mase_softmax_ports[] = {
    {in, "clk"}, {in, "rst"},
    {in, "data_in_0", "DATA_IN_0_PARALLELISM_DIM_0*DATA_IN_0_PRECISION_0", stream},
    {out, "data_out_0", "DATA_IN_0_PARALLELISM_DIM_0*DATA_OUT_0_PRECISION_0", stream},
};
inline constexpr module_text mase_softmax{
    .name = "mase_softmax", .parameters = mase_softmax_parameters, .ports = mase_softmax_ports,
    .description = R"sv(// Softmax over rows of ROW_LENGTH codes, LANES per beat (eval/fixed_functions.hpp, softmax_rule):
//   m = max x;  e_i = E(m - x_i) (EXP_MEMFILE: E(k) for k < EXP_TABLE_SIZE, 0 beyond);
//   s = sum e_i (exact);  y_i = min(floor(e_i * 2^OUT_FRAC / s), largest output code).
// A row takes three passes over its beats: load (the maximum on the fly), exponentiate (the
// sum on the fly) and emit (LANES dividers); the row is held in two small memories.
)sv"sv,
    .body = R"sv(  localparam int LANES = DATA_IN_0_PARALLELISM_DIM_0;
  localparam int IN_W = DATA_IN_0_PRECISION_0;
  localparam int OUT_W = DATA_OUT_0_PRECISION_0;
  localparam int OUT_FRAC = DATA_OUT_0_PRECISION_1;
  localparam int BEATS = ROW_LENGTH / LANES;
  localparam int BW = BEATS > 1 ? $clog2(BEATS) : 1;
  localparam logic [BW-1:0] LAST_BEAT = BW'(BEATS - 1);
  localparam int EXP_W = EXP_FRAC + 1;                         // E(0) = 2^EXP_FRAC
  localparam int SUM_W = EXP_W + $clog2(ROW_LENGTH + 1);       // N terms of at most E(0)
  localparam int DIST_W = IN_W + 2;                            // m - x and the table's size, signed
  localparam int TABLE_W = EXP_TABLE_SIZE > 1 ? $clog2(EXP_TABLE_SIZE) : 1;
  localparam int NUM_W = EXP_W + OUT_FRAC;                     // e * 2^OUT_FRAC
  localparam int DIV_W = NUM_W > SUM_W ? NUM_W : SUM_W;
  localparam logic [DIV_W-1:0] TOP = DIV_W'((1 << (OUT_W - 1)) - 1);  // largest output code

  initial if (ROW_LENGTH % LANES != 0) $fatal(1, "mase_softmax: lanes must divide the row");

  logic [EXP_W-1:0] exp_table[0:EXP_TABLE_SIZE-1];
  // No file by default: yosys elaborates every module with its defaults when reading it.
  initial if (EXP_MEMFILE != "") $readmemh(EXP_MEMFILE, exp_table);

  typedef enum logic [1:0] {
    LOAD,
    EXPONENTIATE,
    EMIT
  } phase_t;
  phase_t phase;
  logic [BW-1:0] beat;
  logic last_beat;
  assign last_beat = beat == LAST_BEAT;

  logic [LANES*IN_W-1:0] codes[0:BEATS-1];
  logic [LANES*EXP_W-1:0] exps[0:BEATS-1];
  logic signed [IN_W-1:0] row_max;
  logic [SUM_W-1:0] sum;

  logic in_fire, out_fire;
  assign data_in_0_ready = phase == LOAD;
  assign in_fire = data_in_0_valid && data_in_0_ready;
  assign data_out_0_valid = phase == EMIT;
  assign out_fire = data_out_0_valid && data_out_0_ready;

  // ---- Load: the beat's maximum, folded into the row's (the first beat starts it).
  logic signed [IN_W-1:0] beat_max;
  always_comb begin
    beat_max = beat == '0 ? $signed(data_in_0[IN_W-1:0]) : row_max;
    for (int lane = 0; lane < LANES; lane++)
      if ($signed(data_in_0[lane*IN_W+:IN_W]) > beat_max) beat_max = $signed(data_in_0[lane*IN_W+:IN_W]);
  end

  // ---- Exponentiate: each lane's distance from the maximum looked up, and the beat's sum.
  logic [LANES*IN_W-1:0] stored;
  logic [LANES*EXP_W-1:0] beat_exps;
  logic [SUM_W-1:0] beat_sum;
  assign stored = codes[beat];
  for (genvar lane = 0; lane < LANES; lane++) begin : g_exp
    logic signed [DIST_W-1:0] distance;
    assign distance = DIST_W'(row_max) - DIST_W'($signed(stored[lane*IN_W+:IN_W]));
    assign beat_exps[lane*EXP_W+:EXP_W] =
        distance < DIST_W'(EXP_TABLE_SIZE) ? exp_table[distance[TABLE_W-1:0]] : '0;
  end
  always_comb begin
    beat_sum = '0;
    for (int lane = 0; lane < LANES; lane++) beat_sum = beat_sum + SUM_W'(beat_exps[lane*EXP_W+:EXP_W]);
  end

  // ---- Emit: one floor division per lane, saturated to the largest output code.
  logic [LANES*EXP_W-1:0] emitted;
  assign emitted = exps[beat];
  for (genvar lane = 0; lane < LANES; lane++) begin : g_divide
    logic [DIV_W-1:0] quotient;
    assign quotient = (DIV_W'(emitted[lane*EXP_W+:EXP_W]) << OUT_FRAC) / DIV_W'(sum);
    assign data_out_0[lane*OUT_W+:OUT_W] = quotient > TOP ? OUT_W'(TOP) : OUT_W'(quotient);
  end

  always_ff @(posedge clk) begin
    if (in_fire) begin
      codes[beat] <= data_in_0;
      row_max <= beat_max;
    end
    if (phase == EXPONENTIATE) begin
      exps[beat] <= beat_exps;
      sum <= (beat == '0 ? '0 : sum) + beat_sum;
    end
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      phase <= LOAD;
      beat  <= '0;
    end else if (in_fire || phase == EXPONENTIATE || out_fire) begin
      beat <= last_beat ? '0 : beat + 1'b1;
      if (last_beat)
        case (phase)
          LOAD: phase <= EXPONENTIATE;
          EXPONENTIATE: phase <= EMIT;
          default: phase <= LOAD;
        endcase
    end
  end
endmodule
)sv"sv};
}  // namespace mase::verilog::rtl
