#pragma once
// mase_layer_norm: layer (or RMS) normalization over rows of a stream, the integer rule of
// eval/fixed_functions.hpp (normalization_rule) step for step: exact sums, an exact inverse
// square root found bit by bit, then each element scaled, shifted and cast once.
#include <mase/verilog/module_interface.hpp>

namespace mase::verilog::rtl {
inline constexpr module_parameter mase_layer_norm_parameters[] = {
    {"DATA_IN_0_PRECISION_0", "8"}, {"DATA_IN_0_PARALLELISM_DIM_0", "1"}, {"DATA_OUT_0_PRECISION_0", "8"},
    {"DATA_OUT_0_PRECISION_1", "4"}, {"OUT_SYMMETRIC", "0"}, {"ROW_LENGTH", "4"}, {"CENTRED", "1"},
    {"HAS_WEIGHT", "0"}, {"HAS_BIAS", "0"}, {"WEIGHT_PRECISION_0", "8"}, {"BIAS_WIDTH", "8"},
    {"RECIPROCAL_BITS", "16"}, {"PRODUCT_FRAC", "16"}, {"EPSILON", "0"}, {"WEIGHT_MEMFILE", "\"\"", ""},
    {"BIAS_MEMFILE", "\"\"", ""},
};
inline constexpr module_port mase_layer_norm_ports[] = {
    {in, "clk"}, {in, "rst"},
    {in, "data_in_0", "DATA_IN_0_PARALLELISM_DIM_0*DATA_IN_0_PRECISION_0", stream},
    {out, "data_out_0", "DATA_IN_0_PARALLELISM_DIM_0*DATA_OUT_0_PRECISION_0", stream},
};
inline constexpr module_text mase_layer_norm{
    .name = "mase_layer_norm", .parameters = mase_layer_norm_parameters, .ports = mase_layer_norm_ports,
    .description = R"sv(// Layer normalization (CENTRED = 1) or RMS normalization (CENTRED = 0) over rows of ROW_LENGTH
// codes, LANES per beat (eval/fixed_functions.hpp, normalization_rule):
//   S1 = sum x (0 for RMS), S2 = sum x^2;  V = N*S2 - S1^2 + EPSILON;
//   R = the largest r with r^2 * V <= 2^(2P) (0 when V = 0), P = RECIPROCAL_BITS, found from the
//       top bit down, one comparison per cycle;
//   y_i = cast((N*x_i - S1) * R * w_i + b_i, PRODUCT_FRAC -> output)  (w_i = 1, b_i = 0 without them)
// A row takes three phases: load (the sums on the fly), the root (P + 2 cycles) and emit.
)sv"sv,
    .body = R"sv(  localparam int LANES = DATA_IN_0_PARALLELISM_DIM_0;
  localparam int IN_W = DATA_IN_0_PRECISION_0;
  localparam int OUT_W = DATA_OUT_0_PRECISION_0;
  localparam int WW = HAS_WEIGHT != 0 ? WEIGHT_PRECISION_0 : 2;  // without a weight: w = 1
  localparam int P = RECIPROCAL_BITS;
  localparam int BEATS = ROW_LENGTH / LANES;
  localparam int BW = BEATS > 1 ? $clog2(BEATS) : 1;
  localparam logic [BW-1:0] LAST_BEAT = BW'(BEATS - 1);
  localparam int LOG_N = $clog2(ROW_LENGTH + 1);
  localparam int S1_W = IN_W + LOG_N + 1;                 // sum of N codes
  localparam int S2_W = 2 * IN_W + LOG_N + 1;             // sum of N squares
  localparam int V_W = S2_W + LOG_N + 2;                  // N*S2 + EPSILON, one sign bit
  localparam int R_W = P + 2;                             // R < 2^(P+1), one sign bit
  localparam int C_W = IN_W + LOG_N + 2;                  // N*x - S1
  localparam int PRODUCT_W = C_W + R_W + WW;             // c*R*w, exactly
  localparam int T_W = (PRODUCT_W > BIAS_WIDTH ? PRODUCT_W : BIAS_WIDTH) + 1;  // plus b
  localparam int ROOT_W = 2 * R_W + V_W;                  // r^2 * V against 2^(2P)
  localparam logic [ROOT_W-1:0] BOUND = ROOT_W'(1) << (2 * P);

  initial if (ROW_LENGTH % LANES != 0) $fatal(1, "mase_layer_norm: lanes must divide the row");

  logic [LANES*WW-1:0] weight_mem[0:BEATS-1];
  logic [LANES*BIAS_WIDTH-1:0] bias_mem[0:BEATS-1];
  // No file by default: yosys elaborates every module with its defaults when reading it.
  initial if (HAS_WEIGHT != 0 && WEIGHT_MEMFILE != "") $readmemh(WEIGHT_MEMFILE, weight_mem);
  initial if (HAS_BIAS != 0 && BIAS_MEMFILE != "") $readmemh(BIAS_MEMFILE, bias_mem);

  typedef enum logic [1:0] {
    LOAD,
    ROOT,
    EMIT
  } phase_t;
  phase_t phase;
  logic [BW-1:0] beat;
  logic last_beat;
  assign last_beat = beat == LAST_BEAT;

  logic [LANES*IN_W-1:0] codes[0:BEATS-1];
  logic signed [S1_W-1:0] s1;
  logic signed [S2_W-1:0] s2;
  logic signed [V_W-1:0] variance;
  logic signed [R_W-1:0] root;
  logic [$clog2(P + 2)-1:0] bit_index;  // P+1: compute V; P..0: try that bit of R
  logic variance_ready;

  logic in_fire, out_fire;
  assign data_in_0_ready = phase == LOAD;
  assign in_fire = data_in_0_valid && data_in_0_ready;
  assign data_out_0_valid = phase == EMIT;
  assign out_fire = data_out_0_valid && data_out_0_ready;

  // ---- Load: the beat's sums, folded into the row's.
  logic signed [S1_W-1:0] beat_s1;
  logic signed [S2_W-1:0] beat_s2;
  always_comb begin
    beat_s1 = beat == '0 ? '0 : s1;
    beat_s2 = beat == '0 ? '0 : s2;
    for (int lane = 0; lane < LANES; lane++) begin
      beat_s1 = beat_s1 + S1_W'($signed(data_in_0[lane*IN_W+:IN_W]));
      beat_s2 = beat_s2 + S2_W'($signed(data_in_0[lane*IN_W+:IN_W]) * $signed(data_in_0[lane*IN_W+:IN_W]));
    end
  end

  // ---- Root: V, then R bit by bit from the top.
  logic signed [S1_W-1:0] centre;
  assign centre = CENTRED != 0 ? s1 : '0;
  logic signed [V_W-1:0] row_variance;
  assign row_variance = V_W'(ROW_LENGTH) * V_W'(s2) - V_W'(centre) * V_W'(centre) + V_W'(EPSILON);
  logic signed [R_W-1:0] candidate;
  logic [ROOT_W-1:0] candidate_product;
  assign candidate = root | (R_W'(1) << bit_index);
  assign candidate_product = ROOT_W'(candidate) * ROOT_W'(candidate) * ROOT_W'(variance);

  // ---- Emit: (N*x - S1) * R * w + b per lane, one cast.
  logic [LANES*IN_W-1:0] stored;
  logic [LANES*WW-1:0] weights;
  logic [LANES*BIAS_WIDTH-1:0] biases;
  logic [LANES*T_W-1:0] exact;
  assign stored = codes[beat];
  assign weights = HAS_WEIGHT != 0 ? weight_mem[beat] : '0;
  assign biases = HAS_BIAS != 0 ? bias_mem[beat] : '0;
  for (genvar lane = 0; lane < LANES; lane++) begin : g_lane
    logic signed [C_W-1:0] deviation;
    logic signed [WW-1:0] w;
    logic signed [T_W-1:0] scaled, shift;
    assign deviation = C_W'(ROW_LENGTH) * C_W'($signed(stored[lane*IN_W+:IN_W])) - C_W'(centre);
    assign w = HAS_WEIGHT != 0 ? $signed(weights[lane*WW+:WW]) : WW'(1);
    assign scaled = T_W'(deviation) * T_W'(root) * T_W'(w);
    assign shift = HAS_BIAS != 0 ? T_W'($signed(biases[lane*BIAS_WIDTH+:BIAS_WIDTH])) : '0;
    assign exact[lane*T_W+:T_W] = scaled + shift;
  end

  mase_cast #(
      .IN_WIDTH (T_W),
      .IN_FRAC  (PRODUCT_FRAC),
      .OUT_WIDTH(OUT_W),
      .OUT_FRAC (DATA_OUT_0_PRECISION_1),
      .SYMMETRIC(OUT_SYMMETRIC),
      .LANES    (LANES)
  ) u_cast (
      .data_in (exact),
      .data_out(data_out_0)
  );

  always_ff @(posedge clk) begin
    if (in_fire) begin
      codes[beat] <= data_in_0;
      s1 <= beat_s1;
      s2 <= beat_s2;
    end
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      phase <= LOAD;
      beat <= '0;
      variance_ready <= 1'b0;
    end else begin
      case (phase)
        LOAD:
        if (in_fire) begin
          beat <= last_beat ? '0 : beat + 1'b1;
          if (last_beat) begin
            phase <= ROOT;
            variance_ready <= 1'b0;
          end
        end
        ROOT:
        if (!variance_ready) begin
          variance <= row_variance;
          root <= '0;
          bit_index <= ($clog2(P + 2))'(P);
          variance_ready <= 1'b1;
        end else begin
          // V = 0 (a constant row with no epsilon): R = 0, as the rule says.
          if (variance != '0 && candidate_product <= BOUND) root <= candidate;
          if (bit_index == '0) phase <= EMIT;
          else bit_index <= bit_index - 1'b1;
        end
        default:
        if (out_fire) begin
          beat <= last_beat ? '0 : beat + 1'b1;
          if (last_beat) phase <= LOAD;
        end
      endcase
    end
  end
endmodule
)sv"sv};
}  // namespace mase::verilog::rtl
