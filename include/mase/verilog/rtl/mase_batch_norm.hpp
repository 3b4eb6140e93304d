#pragma once
// mase_batch_norm: per-channel y = cast(x*scale[c] + shift[c]) with the channel found by counting
// beats; exact arithmetic, C-entry tables read combinationally, one output register stage.
#include <mase/verilog/module_interface.hpp>

namespace mase::verilog::rtl {
inline constexpr module_parameter mase_batch_norm_parameters[] = {
    {"DATA_IN_0_PRECISION_0", "8"}, {"DATA_IN_0_PRECISION_1", "4"}, {"DATA_IN_0_PARALLELISM_DIM_0", "1"},
    {"CHANNELS", "2"}, {"PLANE", "16"}, {"WEIGHT_PRECISION_0", "8"}, {"WEIGHT_PRECISION_1", "4"},
    {"ACCUMULATOR_WIDTH", "17"}, {"DATA_OUT_0_PRECISION_0", "8"}, {"DATA_OUT_0_PRECISION_1", "4"},
    {"OUT_SYMMETRIC", "0"}, {"CHANNELS_LAST", "0"}, {"SCALE_MEMFILE", "\"\"", ""}, {"SHIFT_MEMFILE", "\"\"", ""},
};
inline constexpr module_port mase_batch_norm_ports[] = {
    {in, "clk"}, {in, "rst"},
    {in, "data_in_0", "DATA_IN_0_PARALLELISM_DIM_0*DATA_IN_0_PRECISION_0", stream},
    {out, "data_out_0", "DATA_IN_0_PARALLELISM_DIM_0*DATA_OUT_0_PRECISION_0", stream},
};
inline constexpr module_text mase_batch_norm{
    .name = "mase_batch_norm", .parameters = mase_batch_norm_parameters, .ports = mase_batch_norm_ports,
    .description = R"sv(// Per-channel scale and shift (inference batch norm): y = cast(x*scale[c] + shift[c], XF+SF -> OUT).
// The channel of each beat comes from counting beats (PLANE/LANES per channel, CHANNELS per
// sample), and the tables are read combinationally. PLANE is a channel's elements in a sample:
// H*W for [N, C, H, W], L for [N, C, L], 1 for [N, C]. CHANNELS_LAST = 1: a beat holds LANES
// channels of one pixel (H x W x C, or [N, C]'s channels in order) and a table word holds LANES
// entries (lane 0 lowest). One output register stage breaks the multiply/add/cast path and
// refills in the cycle it drains (full throughput).
)sv"sv,
    .body = R"sv(  localparam int LANES = DATA_IN_0_PARALLELISM_DIM_0;
  localparam int XW = DATA_IN_0_PRECISION_0;
  localparam int SW = WEIGHT_PRECISION_0;
  localparam int AW = ACCUMULATOR_WIDTH;
  localparam int OUT_W = DATA_OUT_0_PRECISION_0;
  localparam int WORD_ENTRIES = CHANNELS_LAST != 0 ? LANES : 1;  // table entries a beat reads
  localparam int TABLE_WORDS = CHANNELS / WORD_ENTRIES;
  localparam int BEATS_PER_WORD = CHANNELS_LAST != 0 ? 1 : PLANE / LANES;
  localparam int PRODUCT_W = XW + SW;
  // One bit above both the product and the shift: the sum is exact whatever the shift's
  // magnitude, and a too-small ACCUMULATOR_WIDTH cannot make the extension counts negative.
  localparam int SUM_W = (AW > PRODUCT_W ? AW : PRODUCT_W) + 1;
  localparam int BW = BEATS_PER_WORD > 1 ? $clog2(BEATS_PER_WORD) : 1;
  localparam int CW = TABLE_WORDS > 1 ? $clog2(TABLE_WORDS) : 1;
  localparam logic [BW-1:0] LAST_BEAT = BW'(BEATS_PER_WORD - 1);
  localparam logic [CW-1:0] LAST_WORD = CW'(TABLE_WORDS - 1);

  // A beat must never straddle two channels (iverilog/Verilator stop at time 0, yosys refuses
  // the unknown task when the condition is constant-true).
  initial if ((CHANNELS_LAST != 0 ? CHANNELS : PLANE) % LANES != 0)
    $fatal(1, "mase_batch_norm: lanes must divide PLANE (CHANNELS where CHANNELS_LAST)");

  logic [WORD_ENTRIES*SW-1:0] scale_mem[0:TABLE_WORDS-1];
  logic [WORD_ENTRIES*AW-1:0] shift_mem[0:TABLE_WORDS-1];
  // No file by default: yosys elaborates every module with its defaults when reading it.
  initial if (SCALE_MEMFILE != "") $readmemh(SCALE_MEMFILE, scale_mem);
  initial if (SHIFT_MEMFILE != "") $readmemh(SHIFT_MEMFILE, shift_mem);

  // ---- Which table word (channel, or LANES channels) the current input beat belongs to.
  logic [BW-1:0] beat;
  logic [CW-1:0] word;
  logic in_fire;
  assign in_fire = data_in_0_valid && data_in_0_ready;

  always_ff @(posedge clk) begin
    if (rst) begin
      beat <= '0;
      word <= '0;
    end else if (in_fire) begin
      beat <= beat == LAST_BEAT ? '0 : beat + 1'b1;
      if (beat == LAST_BEAT) word <= word == LAST_WORD ? '0 : word + 1'b1;
    end
  end

  // ---- Exact x*scale + shift per lane, then one cast.
  logic [WORD_ENTRIES*SW-1:0] scale_word;
  logic [WORD_ENTRIES*AW-1:0] shift_word;
  assign scale_word = scale_mem[word];
  assign shift_word = shift_mem[word];

  logic [LANES*SUM_W-1:0] exact;
  logic [LANES*OUT_W-1:0] cast_result;

  for (genvar lane = 0; lane < LANES; lane++) begin : g_lane
    localparam int ENTRY = CHANNELS_LAST != 0 ? lane : 0;
    logic signed [SW-1:0] scale;
    logic signed [AW-1:0] shift;
    assign scale = scale_word[ENTRY*SW+:SW];
    assign shift = shift_word[ENTRY*AW+:AW];
    logic signed [XW-1:0] x;
    logic signed [PRODUCT_W-1:0] product;
    logic signed [SUM_W-1:0] product_wide, shift_wide;
    assign x = data_in_0[lane*XW+:XW];
    assign product = x * scale;
    assign product_wide = {{(SUM_W - PRODUCT_W) {product[PRODUCT_W-1]}}, product};
    assign shift_wide = {{(SUM_W - AW) {shift[AW-1]}}, shift};
    assign exact[lane*SUM_W+:SUM_W] = product_wide + shift_wide;
  end

  mase_cast #(
      .IN_WIDTH (SUM_W),
      .IN_FRAC  (DATA_IN_0_PRECISION_1 + WEIGHT_PRECISION_1),
      .OUT_WIDTH(OUT_W),
      .OUT_FRAC (DATA_OUT_0_PRECISION_1),
      .SYMMETRIC(OUT_SYMMETRIC),
      .LANES    (LANES)
  ) u_cast (
      .data_in (exact),
      .data_out(cast_result)
  );

  // The output register can take a new word when it is empty or being drained this cycle.
  assign data_in_0_ready = !data_out_0_valid || data_out_0_ready;

  always_ff @(posedge clk) begin
    if (rst) data_out_0_valid <= 1'b0;
    else if (data_in_0_ready) data_out_0_valid <= data_in_0_valid;
  end
  always_ff @(posedge clk) begin
    if (in_fire) data_out_0 <= cast_result;
  end
endmodule
)sv"sv};
}  // namespace mase::verilog::rtl
