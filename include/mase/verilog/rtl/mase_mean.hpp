#pragma once
// mase_mean: global average pooling, the integer rule of eval/mean_rule.hpp: each run of COUNT
// consecutive values summed exactly, divided by one constant multiply and shift, saturated.
#include <mase/verilog/module_interface.hpp>

namespace mase::verilog::rtl {
inline constexpr module_parameter mase_mean_parameters[] = {
    {"DATA_IN_0_PRECISION_0", "8"}, {"DATA_IN_0_PARALLELISM_DIM_0", "1"}, {"COUNT", "4"},
    {"DATA_OUT_0_PRECISION_0", "8"}, {"DATA_OUT_0_PRECISION_1", "4"}, {"DATA_OUT_0_PARALLELISM_DIM_0", "1"},
    {"OUT_SYMMETRIC", "0"}, {"CHANNELS_LAST", "0"}, {"CHANNELS", "1"}, {"SUM_WIDTH", "10"}, {"NUMERATOR_SHIFT", "0"},
    {"NUMERATOR_WIDTH", "10"}, {"MULTIPLIER_WIDTH", "1"}, {"SHIFT", "0"}, {"OFFSET", "64'd0", "logic [63:0]"},
    {"OFFSET_QUOTIENT", "64'd0", "logic [63:0]"}, {"MULTIPLIER", "64'd1", "logic [63:0]"},
};
inline constexpr module_port mase_mean_ports[] = {
    {in, "clk"}, {in, "rst"},
    {in, "data_in_0", "DATA_IN_0_PARALLELISM_DIM_0*DATA_IN_0_PRECISION_0", stream},
    {out, "data_out_0", "DATA_OUT_0_PARALLELISM_DIM_0*DATA_OUT_0_PRECISION_0", stream},
};
inline constexpr module_text mase_mean{
    .name = "mase_mean", .parameters = mase_mean_parameters, .ports = mase_mean_ports,
    .description = R"sv(// Mean of each run of COUNT consecutive values (a channel's plane: global average pooling), as
// eval/mean_rule.hpp defines it: y = saturate(floor(S * 2^NUMERATOR_SHIFT / D)) for the exact sum S,
// divided in mase_reciprocal_divide. The lanes are summed in one cycle and the runs accumulated
// beat by beat; one mean leaves per run, on one lane, from a register that refills in the cycle it
// drains. CHANNELS_LAST = 1: the stream is COUNT pixels of CHANNELS channels (H x W x C), LANES
// channels a beat; each channel's sum is kept in a table of CHANNELS/LANES words, and at the last
// pixel each beat's LANES means leave together.
)sv"sv,
    .body = R"sv(  localparam int LANES = DATA_IN_0_PARALLELISM_DIM_0;
  localparam int XW = DATA_IN_0_PRECISION_0;
  localparam int OW = DATA_OUT_0_PRECISION_0;
  localparam int OUT_LANES = DATA_OUT_0_PARALLELISM_DIM_0;

  // ---- Handshakes, shared by both orders: a beat is taken while the output register can take
  // the means; at a run's last beat the register takes cast_result, the means of the run.
  logic in_fire, last;
  logic [OUT_LANES*OW-1:0] cast_result;
  assign data_in_0_ready = !data_out_0_valid || data_out_0_ready;
  assign in_fire = data_in_0_valid && data_in_0_ready;
  always_ff @(posedge clk) begin
    if (rst) data_out_0_valid <= 1'b0;
    else if (in_fire && last) data_out_0_valid <= 1'b1;
    else if (data_out_0_ready) data_out_0_valid <= 1'b0;
  end
  always_ff @(posedge clk)
    if (in_fire && last) data_out_0 <= cast_result;

  if (CHANNELS_LAST != 0) begin : g_channels
    localparam int WORDS = CHANNELS / LANES;   // a pixel's beats
    localparam int WAW = WORDS > 1 ? $clog2(WORDS) : 1;
    localparam int PW = COUNT > 1 ? $clog2(COUNT) : 1;
    localparam logic [WAW-1:0] LAST_WORD = WAW'(WORDS - 1);
    localparam logic [PW-1:0] LAST_PIXEL = PW'(COUNT - 1);

    initial if (CHANNELS % LANES != 0 || OUT_LANES != LANES)
      $fatal(1, "mase_mean: lanes must divide CHANNELS, and the means leave at the input's lanes");

    // ---- Each channel's exact sum over the pixels so far: a word of LANES sums per beat of a pixel.
    logic [LANES*SUM_WIDTH-1:0] sums [0:WORDS-1];
    logic [LANES*SUM_WIDTH-1:0] totals;
    logic [WAW-1:0] word;
    logic [PW-1:0] pixel;
    for (genvar l = 0; l < LANES; l++) begin : g_lane
      logic signed [SUM_WIDTH-1:0] earlier;
      assign earlier = pixel == '0 ? '0 : $signed(sums[word][l*SUM_WIDTH+:SUM_WIDTH]);
      assign totals[l*SUM_WIDTH+:SUM_WIDTH] = earlier + SUM_WIDTH'($signed(data_in_0[l*XW+:XW]));
    end
    mase_reciprocal_divide #(
        .SUM_WIDTH(SUM_WIDTH), .NUMERATOR_SHIFT(NUMERATOR_SHIFT), .NUMERATOR_WIDTH(NUMERATOR_WIDTH),
        .MULTIPLIER_WIDTH(MULTIPLIER_WIDTH), .SHIFT(SHIFT), .OFFSET(OFFSET), .OFFSET_QUOTIENT(OFFSET_QUOTIENT),
        .MULTIPLIER(MULTIPLIER), .OUT_WIDTH(OW), .OUT_FRAC(DATA_OUT_0_PRECISION_1), .OUT_SYMMETRIC(OUT_SYMMETRIC),
        .LANES(LANES)
    ) u_divide (
        .data_in (totals),
        .data_out(cast_result)
    );

    // ---- A run ends at the last pixel: each beat of it gives that beat's channels' means.
    assign last = pixel == LAST_PIXEL;
    always_ff @(posedge clk) begin
      if (rst) begin
        word <= '0;
        pixel <= '0;
      end else if (in_fire) begin
        word <= word == LAST_WORD ? '0 : word + 1'b1;
        if (word == LAST_WORD) pixel <= last ? '0 : pixel + 1'b1;
      end
    end
    always_ff @(posedge clk)
      if (in_fire && !last) sums[word] <= totals;
  end else begin : g_runs
    localparam int BEATS = COUNT / LANES;
    localparam int BW = BEATS > 1 ? $clog2(BEATS) : 1;
    localparam logic [BW-1:0] LAST_BEAT = BW'(BEATS - 1);

    initial if (COUNT % LANES != 0 || OUT_LANES != 1)
      $fatal(1, "mase_mean: lanes must divide COUNT, and the means leave on one lane");

    // ---- The run's exact sum: this beat's lanes, plus the beats before it.
    logic signed [SUM_WIDTH-1:0] lane_sum, earlier, total;
    always_comb begin
      lane_sum = '0;
      for (int l = 0; l < LANES; l++) lane_sum = lane_sum + SUM_WIDTH'($signed(data_in_0[l*XW+:XW]));
    end
    assign total = earlier + lane_sum;
    mase_reciprocal_divide #(
        .SUM_WIDTH(SUM_WIDTH), .NUMERATOR_SHIFT(NUMERATOR_SHIFT), .NUMERATOR_WIDTH(NUMERATOR_WIDTH),
        .MULTIPLIER_WIDTH(MULTIPLIER_WIDTH), .SHIFT(SHIFT), .OFFSET(OFFSET), .OFFSET_QUOTIENT(OFFSET_QUOTIENT),
        .MULTIPLIER(MULTIPLIER), .OUT_WIDTH(OW), .OUT_FRAC(DATA_OUT_0_PRECISION_1), .OUT_SYMMETRIC(OUT_SYMMETRIC),
        .LANES(1)
    ) u_divide (
        .data_in (total),
        .data_out(cast_result)
    );

    // ---- A run ends at its last beat, with one mean.
    logic [BW-1:0] beat;
    assign last = beat == LAST_BEAT;
    always_ff @(posedge clk) begin
      if (rst) begin
        beat <= '0;
        earlier <= '0;
      end else if (in_fire) begin
        beat <= last ? '0 : beat + 1'b1;
        earlier <= last ? '0 : total;
      end
    end
  end
endmodule
)sv"sv};
}  // namespace mase::verilog::rtl
