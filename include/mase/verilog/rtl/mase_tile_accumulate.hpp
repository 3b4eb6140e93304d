#pragma once
// mase_tile_accumulate: the tile engine of mase_linear and mase_matmul; issues one tile per
// cycle, accumulates it exactly from the bias, and casts each finished group once.
#include <mase/verilog/module_interface.hpp>

namespace mase::verilog::rtl {
inline constexpr module_parameter mase_tile_accumulate_parameters[] = {
    {"X_WIDTH", "8"}, {"W_WIDTH", "8"}, {"PRODUCT_FRAC", "8"}, {"X_LANES", "2"}, {"OUT_LANES", "2"}, {"CHUNKS", "2"},
    {"GROUPS", "2"}, {"ACC_WIDTH", "20"}, {"HAS_BIAS", "0"}, {"BIAS_MEMFILE", "\"\"", ""}, {"OUT_WIDTH", "8"},
    {"OUT_FRAC", "4"}, {"OUT_SYMMETRIC", "0"},
};
inline constexpr module_port mase_tile_accumulate_ports[] = {
    {in, "clk"}, {in, "rst"},
    {in, "operands_ready"},
    {out, "issue"}, {out, "issue_chunk", "(CHUNKS > 1 ? $clog2(CHUNKS) : 1)"},
    {out, "issue_tile", "(CHUNKS*GROUPS > 1 ? $clog2(CHUNKS*GROUPS) : 1)"}, {out, "row_issued"},
    {in, "x", "X_LANES*X_WIDTH", false, false, "Operands of the tile issued last, from synchronous reads at the issue:\nchunk issue_chunk"},
    {in, "w", "OUT_LANES*X_LANES*W_WIDTH", false, false, "lane r*X_LANES + c"},
    {out, "data_out", "OUT_LANES*OUT_WIDTH", stream},
};
inline constexpr module_text mase_tile_accumulate{
    .name = "mase_tile_accumulate", .parameters = mase_tile_accumulate_parameters, .ports = mase_tile_accumulate_ports,
    .description = R"sv(// The tile engine shared by mase_linear and mase_matmul: issues one OUT_LANES x X_LANES tile per
// cycle (chunk k innermost, then group g) while the caller's operands are ready; the caller reads
// the x chunk and the w tile at the issue (synchronous reads), and one cycle later each output
// lane adds its X_LANES exact products to its accumulator (a group's first tile starts from its
// aligned bias, or zero). A finished group is cast once and leaves through an output register;
// the only stall is a finished group meeting a full output register.
)sv"sv,
    .body = R"sv(  localparam int AW = ACC_WIDTH;
  localparam int KW = CHUNKS > 1 ? $clog2(CHUNKS) : 1;
  localparam int GW = GROUPS > 1 ? $clog2(GROUPS) : 1;
  localparam logic [KW-1:0] LAST_CHUNK = KW'(CHUNKS - 1);
  localparam logic [GW-1:0] LAST_GROUP = GW'(GROUPS - 1);

  // ---- Stage 1: issue tile (issue_group, issue_chunk), index issue_tile = g*CHUNKS + k.
  logic stall, issue_last_chunk, issue_last_group;
  logic [GW-1:0] issue_group;

  assign issue = operands_ready && !stall;
  assign issue_last_chunk = issue_chunk == LAST_CHUNK;
  assign issue_last_group = issue_group == LAST_GROUP;
  assign row_issued = issue && issue_last_chunk && issue_last_group;

  always_ff @(posedge clk) begin
    if (rst) begin
      issue_chunk <= '0;
      issue_group <= '0;
      issue_tile  <= '0;
    end else if (issue) begin
      issue_chunk <= issue_last_chunk ? '0 : issue_chunk + 1'b1;
      if (issue_last_chunk) issue_group <= issue_last_group ? '0 : issue_group + 1'b1;
      issue_tile <= row_issued ? '0 : issue_tile + 1'b1;
    end
  end

  logic [OUT_LANES*AW-1:0] bias_aligned;
  logic stage2_valid, stage2_first, stage2_last;

  if (HAS_BIAS != 0) begin : g_bias
    mase_rom #(
        .WIDTH  (OUT_LANES * AW),
        .DEPTH  (GROUPS),
        .MEMFILE(BIAS_MEMFILE)
    ) u_bias_rom (
        .clk (clk),
        .en  (issue),
        .addr(issue_group),
        .q   (bias_aligned)
    );
  end else begin : g_no_bias
    assign bias_aligned = '0;
  end

  always_ff @(posedge clk) begin
    if (rst) stage2_valid <= 1'b0;
    else if (!stall) stage2_valid <= issue;
  end

  always_ff @(posedge clk) begin
    if (issue) begin
      stage2_first <= issue_chunk == '0;
      stage2_last  <= issue_last_chunk;
    end
  end

  // ---- Stage 2: OUT_LANES x X_LANES multipliers; each lane adds its products to its accumulator.
  logic [OUT_LANES*AW-1:0] accumulators, accumulators_next;
  logic [OUT_LANES*OUT_WIDTH-1:0] group_result;
  logic group_done;

  for (genvar r = 0; r < OUT_LANES; r++) begin : g_lane
    logic [X_LANES*AW-1:0] products;
    logic [AW-1:0] lane_base, lane_sum;
    for (genvar c = 0; c < X_LANES; c++) begin : g_term
      logic signed [X_WIDTH-1:0] x_value;
      logic signed [W_WIDTH-1:0] w_value;
      assign x_value = x[c*X_WIDTH+:X_WIDTH];
      assign w_value = w[(r*X_LANES+c)*W_WIDTH+:W_WIDTH];
      assign products[c*AW+:AW] = x_value * w_value;  // AW-bit context: exact (or wraps
      // consistently modulo 2^AW, which still yields the exact final sum when it fits)
    end
    // A group's first tile starts from the bias (or zero) instead of the running sum.
    assign lane_base = stage2_first ? bias_aligned[r*AW+:AW] : accumulators[r*AW+:AW];
    always_comb begin
      lane_sum = lane_base;
      for (int c = 0; c < X_LANES; c++) lane_sum = lane_sum + products[c*AW+:AW];
    end
    assign accumulators_next[r*AW+:AW] = lane_sum;
  end

  always_ff @(posedge clk) begin
    if (stage2_valid && !stall) accumulators <= accumulators_next;
  end

  mase_cast #(
      .IN_WIDTH (AW),
      .IN_FRAC  (PRODUCT_FRAC),
      .OUT_WIDTH(OUT_WIDTH),
      .OUT_FRAC (OUT_FRAC),
      .SYMMETRIC(OUT_SYMMETRIC),
      .LANES    (OUT_LANES)
  ) u_cast (
      .data_in (accumulators_next),
      .data_out(group_result)
  );

  // ---- Output register: one beat per finished group.
  assign group_done = stage2_valid && stage2_last;
  assign stall = group_done && data_out_valid && !data_out_ready;

  always_ff @(posedge clk) begin
    if (rst) data_out_valid <= 1'b0;
    else if (group_done && !stall) data_out_valid <= 1'b1;
    else if (data_out_ready) data_out_valid <= 1'b0;
  end

  always_ff @(posedge clk) begin
    if (group_done && !stall) data_out <= group_result;
  end
endmodule
)sv"sv};
}  // namespace mase::verilog::rtl
