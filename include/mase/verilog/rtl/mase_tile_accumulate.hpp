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
// the x chunk and the w tile at the issue (synchronous reads). The datapath is a pipeline with a
// register after every step, so no path holds more than one adder: operand and product registers
// (a DSP's input and output registers), a registered adder tree per output lane whose extra leaf
// is the group's aligned bias (its first tile) or zero, a running sum, and the finished group.
// A finished group is cast into a two-word output queue; the pipeline's one stall is a register
// (the queue is full), never a path from data_out_ready.
)sv"sv,
    .body = R"sv(  localparam int AW = ACC_WIDTH;
  localparam int PW = X_WIDTH + W_WIDTH;
  localparam int KW = CHUNKS > 1 ? $clog2(CHUNKS) : 1;
  localparam int GW = GROUPS > 1 ? $clog2(GROUPS) : 1;
  localparam int BW = $clog2(GROUPS + 1);  // a bias word: a group's, or the zero word GROUPS
  localparam int LEAVES = X_LANES + (HAS_BIAS != 0 ? 1 : 0);
  localparam int LEVELS = LEAVES > 1 ? $clog2(LEAVES) : 0;
  localparam int TREE = 1 << LEVELS;  // leaves, padded with zeros to a power of two
  // Issue -> read (x, w) -> operands -> products (and bias) -> LEVELS tree levels -> running sum.
  localparam int STAGES = 3 + LEVELS;

  // ---- Issue tile (issue_group, issue_chunk), index issue_tile = g*CHUNKS + k; where the next
  // issue falls (first or last chunk, last group) is kept in registers, not compared.
  logic stall;
  logic issue_last_chunk, issue_last_group;
  logic [GW-1:0] issue_group;

  assign issue = operands_ready && !stall;
  assign row_issued = issue && issue_last_chunk && issue_last_group;

  always_ff @(posedge clk) begin
    if (rst) begin
      issue_chunk <= '0;
      issue_group <= '0;
      issue_tile <= '0;
      issue_last_chunk <= CHUNKS == 1;
      issue_last_group <= GROUPS == 1;
    end else if (issue) begin
      if (issue_last_chunk) begin
        issue_chunk <= '0;
        issue_last_chunk <= CHUNKS == 1;
        issue_group <= issue_last_group ? '0 : issue_group + 1'b1;
        issue_last_group <= GROUPS == 1 || (!issue_last_group && issue_group == GW'(GROUPS > 1 ? GROUPS - 2 : 0));
      end else begin
        issue_chunk <= issue_chunk + 1'b1;
        issue_last_chunk <= issue_chunk == KW'(CHUNKS > 1 ? CHUNKS - 2 : 0);
      end
      issue_tile <= row_issued ? '0 : issue_tile + 1'b1;
    end
  end

  // Each stage's tile: valid, and whether it is its group's last.
  logic [STAGES-1:0] stage_valid, stage_last;
  always_ff @(posedge clk) begin
    if (rst) stage_valid <= '0;
    else if (!stall) stage_valid <= {stage_valid[STAGES-2:0], issue};
  end
  always_ff @(posedge clk) begin
    if (!stall) stage_last <= {stage_last[STAGES-2:0], issue_last_chunk};
  end

  // ---- Operands, then products: registers a DSP absorbs (input and output registers).
  logic [X_LANES*X_WIDTH-1:0] x_operands;
  logic [OUT_LANES*X_LANES*W_WIDTH-1:0] w_operands;
  logic [OUT_LANES*X_LANES*PW-1:0] products;
  always_ff @(posedge clk) begin
    if (!stall) begin
      x_operands <= x;
      w_operands <= w;
    end
  end
  for (genvar r = 0; r < OUT_LANES; r++) begin : g_product_lane
    for (genvar c = 0; c < X_LANES; c++) begin : g_product
      logic signed [X_WIDTH-1:0] x_value;
      logic signed [W_WIDTH-1:0] w_value;
      assign x_value = x_operands[c*X_WIDTH+:X_WIDTH];
      assign w_value = w_operands[(r*X_LANES+c)*W_WIDTH+:W_WIDTH];
      always_ff @(posedge clk) begin
        if (!stall) products[(r*X_LANES+c)*PW+:PW] <= PW'(x_value * w_value);
      end
    end
  end

  // ---- The bias leaf: read so that it lands beside its tile's products. A group's first tile
  // reads the group's word, every other tile the zero word after the last group's.
  logic [OUT_LANES*AW-1:0] bias_leaf;
  if (HAS_BIAS != 0) begin : g_bias
    logic issue_first_chunk;
    logic [BW-1:0] read_bias_word, operand_bias_word;
    always_ff @(posedge clk) begin
      if (rst) issue_first_chunk <= 1'b1;
      else if (issue) issue_first_chunk <= issue_last_chunk;
    end
    always_ff @(posedge clk) begin
      if (issue) read_bias_word <= issue_first_chunk ? BW'(issue_group) : BW'(GROUPS);
      if (!stall) operand_bias_word <= read_bias_word;
    end
    mase_rom #(
        .WIDTH  (OUT_LANES * AW),
        .DEPTH  (GROUPS + 1),
        .MEMFILE(BIAS_MEMFILE)
    ) u_bias_rom (
        .clk (clk),
        .en  (!stall),
        .addr(operand_bias_word),
        .q   (bias_leaf)
    );
  end else begin : g_no_bias
    logic unused_bias_leaf;  // no tree has a bias leaf
    assign bias_leaf = '0;
    assign unused_bias_leaf = ^bias_leaf;
  end

  // ---- Per output lane, a heap-ordered adder tree with a register at every node: node i adds
  // nodes 2i+1 and 2i+2; the leaves (nodes TREE-1 ..) are the products and the bias leaf.
  logic [OUT_LANES*AW-1:0] tree_sums;
  for (genvar r = 0; r < OUT_LANES; r++) begin : g_tree
    logic [TREE*AW-1:0] leaves;
    for (genvar c = 0; c < TREE; c++) begin : g_leaf
      if (c < X_LANES) begin : g_product_leaf
        logic signed [PW-1:0] product;
        assign product = products[(r*X_LANES+c)*PW+:PW];
        assign leaves[c*AW+:AW] = AW'(product);
      end else if (c == X_LANES && HAS_BIAS != 0) begin : g_bias_leaf
        assign leaves[c*AW+:AW] = bias_leaf[r*AW+:AW];
      end else begin : g_zero_leaf
        assign leaves[c*AW+:AW] = '0;
      end
    end
    if (LEVELS == 0) begin : g_single_leaf
      assign tree_sums[r*AW+:AW] = leaves[AW-1:0];
    end else begin : g_levels
      logic [(TREE-1)*AW-1:0] nodes;
      logic [(2*TREE-1)*AW-1:0] heap;
      assign heap = {leaves, nodes};
      always_ff @(posedge clk) begin
        if (!stall)
          for (int i = 0; i < TREE - 1; i++)
            nodes[i*AW+:AW] <= heap[(2*i+1)*AW+:AW] + heap[(2*i+2)*AW+:AW];
      end
      assign tree_sums[r*AW+:AW] = nodes[AW-1:0];
    end
  end

  // ---- Running sums: a group's last tile moves the sum to `finished` and clears it.
  logic tree_valid, tree_last, group_ends, finished_valid;
  logic [OUT_LANES*AW-1:0] running, running_next, finished;
  assign tree_valid = stage_valid[STAGES-1];
  assign tree_last = stage_last[STAGES-1];
  assign group_ends = !stall && tree_valid && tree_last;
  for (genvar r = 0; r < OUT_LANES; r++) begin : g_running
    assign running_next[r*AW+:AW] = running[r*AW+:AW] + tree_sums[r*AW+:AW];
  end
  always_ff @(posedge clk) begin
    if (rst || group_ends) running <= '0;
    else if (!stall && tree_valid) running <= running_next;
  end
  always_ff @(posedge clk) begin
    if (group_ends) finished <= running_next;
  end
  always_ff @(posedge clk) begin
    if (rst) finished_valid <= 1'b0;
    else if (!stall) finished_valid <= tree_valid && tree_last;
  end

  // ---- The cast, into a two-word queue whose head is data_out. The stall is registered: it
  // holds the pipeline for a cycle after the queue fills, so the spare word takes what arrives.
  logic [OUT_LANES*OUT_WIDTH-1:0] group_result, spare;
  logic push, pop, spare_valid, head_valid_next, spare_valid_next;

  mase_cast #(
      .IN_WIDTH (AW),
      .IN_FRAC  (PRODUCT_FRAC),
      .OUT_WIDTH(OUT_WIDTH),
      .OUT_FRAC (OUT_FRAC),
      .SYMMETRIC(OUT_SYMMETRIC),
      .LANES    (OUT_LANES)
  ) u_cast (
      .data_in (finished),
      .data_out(group_result)
  );

  assign push = finished_valid && !stall;
  assign pop = data_out_valid && data_out_ready;
  // Words held after this edge: head and spare now, plus the push, less the pop.
  assign head_valid_next = push || spare_valid || (data_out_valid && !pop);
  assign spare_valid_next = data_out_valid && spare_valid ? !pop : data_out_valid && !pop && push;

  always_ff @(posedge clk) begin
    if (rst) begin
      data_out_valid <= 1'b0;
      spare_valid <= 1'b0;
      stall <= 1'b0;
    end else begin
      data_out_valid <= head_valid_next;
      spare_valid <= spare_valid_next;
      stall <= spare_valid_next;
    end
  end

  always_ff @(posedge clk) begin
    if (!data_out_valid || pop) data_out <= spare_valid ? spare : group_result;
    if (spare_valid_next) spare <= spare_valid && !pop ? spare : group_result;
  end
endmodule
)sv"sv};
}  // namespace mase::verilog::rtl
