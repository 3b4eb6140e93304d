#pragma once
// mase_binary: element-wise add/sub/mul, exact then one cast, behind one output register stage
// that refills while it drains (full throughput). Either operand may instead be a constant (a
// table of its values in output order) or a smaller stream that broadcasts (each sample buffered,
// then read in the order of a table), as PyTorch broadcasts a bias, a position embedding or an
// attention mask.
#include <mase/verilog/module_interface.hpp>

namespace mase::verilog::rtl {
inline constexpr module_parameter mase_binary_parameters[] = {
    {"OPERATION", "0"}, {"DATA_IN_0_PRECISION_0", "8"}, {"DATA_IN_0_PRECISION_1", "4"},
    {"DATA_IN_1_PRECISION_0", "8"}, {"DATA_IN_1_PRECISION_1", "4"}, {"DATA_OUT_0_PRECISION_0", "8"},
    {"DATA_OUT_0_PRECISION_1", "4"}, {"DATA_OUT_0_PARALLELISM_DIM_0", "1"}, {"OUT_SYMMETRIC", "0"},
    {"CONSTANT_INPUT", "-1"}, {"BROADCAST_INPUT", "-1"}, {"BROADCAST_SIZE", "1"}, {"SAMPLE_BEATS", "1"},
    {"TABLE_WIDTH", "1"}, {"TABLE_MEMFILE", "\"\"", ""},
};
inline constexpr module_port mase_binary_ports[] = {
    {in, "clk"}, {in, "rst"},
    {in, "data_in_0", "(BROADCAST_INPUT == 0 ? 1 : DATA_OUT_0_PARALLELISM_DIM_0)*DATA_IN_0_PRECISION_0", stream},
    {in, "data_in_1", "(BROADCAST_INPUT == 1 ? 1 : DATA_OUT_0_PARALLELISM_DIM_0)*DATA_IN_1_PRECISION_0", stream},
    {out, "data_out_0", "DATA_OUT_0_PARALLELISM_DIM_0*DATA_OUT_0_PRECISION_0", stream},
};
inline constexpr module_text mase_binary{
    .name = "mase_binary", .parameters = mase_binary_parameters, .ports = mase_binary_ports,
    .description = R"sv(// Element-wise add (0), sub (1) or mul (2), computed exactly and then cast once, LANES results
// per beat (DATA_OUT_0_PARALLELISM_DIM_0). Each operand is one of:
// - a stream of the result's shape, LANES elements per beat (the default);
// - CONSTANT_INPUT: a constant, whose values for each beat of a sample (SAMPLE_BEATS beats, LANES
//   per word, lane 0 lowest) TABLE_MEMFILE holds; its ports are unused;
// - BROADCAST_INPUT: a stream of BROADCAST_SIZE elements per sample, one per beat, written into one
//   bank of two and read for each beat at the positions TABLE_MEMFILE gives (LANES per word),
//   while the next sample fills the other bank.
// The table word for the next beat is read into a register as the current beat leaves (a
// synchronous read, so a large table can be a block RAM). Every operand present transfers
// together into one output register stage, which breaks the multiplier/cast path and refills
// in the cycle it drains.
// Each mode leaves some ports, signals and constants unused (a constant operand's ports, the
// table when neither operand is a constant or broadcast).
/* verilator lint_off UNUSEDSIGNAL */
/* verilator lint_off UNUSEDPARAM */
)sv"sv,
    .body = R"sv(  localparam int LANES = DATA_OUT_0_PARALLELISM_DIM_0;
  localparam int W0 = DATA_IN_0_PRECISION_0;
  localparam int F0 = DATA_IN_0_PRECISION_1;
  localparam int W1 = DATA_IN_1_PRECISION_0;
  localparam int F1 = DATA_IN_1_PRECISION_1;
  localparam int OUT_W = DATA_OUT_0_PRECISION_0;
  localparam bit IS_MUL = OPERATION == 2;
  localparam bit HAS_TABLE = CONSTANT_INPUT >= 0 || BROADCAST_INPUT >= 0;
  // add/sub: both operands aligned to the finer fraction, one guard bit for the carry.
  localparam int ALIGN_F = F0 > F1 ? F0 : F1;
  localparam int ALIGNED_W0 = W0 + ALIGN_F - F0;
  localparam int ALIGNED_W1 = W1 + ALIGN_F - F1;
  localparam int SUM_W = (ALIGNED_W0 > ALIGNED_W1 ? ALIGNED_W0 : ALIGNED_W1) + 1;
  // Exact result format fed to the cast.
  localparam int EXACT_W = IS_MUL ? W0 + W1 : SUM_W;
  localparam int EXACT_F = IS_MUL ? F0 + F1 : ALIGN_F;
  localparam int BEAT_W = SAMPLE_BEATS > 1 ? $clog2(SAMPLE_BEATS) : 1;
  localparam logic [BEAT_W-1:0] LAST_BEAT = BEAT_W'(SAMPLE_BEATS - 1);
  localparam int BANK_AW = BROADCAST_SIZE > 1 ? $clog2(BROADCAST_SIZE) : 1;
  localparam logic [BANK_AW-1:0] LAST_POSITION = BANK_AW'(BROADCAST_SIZE - 1);

  initial if (CONSTANT_INPUT >= 0 && BROADCAST_INPUT >= 0) $fatal(1, "mase_binary: one operand is a stream of the result's shape");

  // The operands of this beat, and whether each is there.
  logic [LANES*W0-1:0] a_word;
  logic [LANES*W1-1:0] b_word;
  logic a_valid, b_valid, can_load, fire;
  assign can_load = !data_out_0_valid || data_out_0_ready;
  assign fire = can_load && a_valid && b_valid;

  // The beat within the sample, and the table word for it.
  logic [BEAT_W-1:0] beat;
  logic [LANES*TABLE_WIDTH-1:0] table_word;
  always_ff @(posedge clk) begin
    if (rst) beat <= '0;
    else if (fire) beat <= beat == LAST_BEAT ? '0 : beat + 1'b1;
  end
  if (HAS_TABLE) begin : g_table
    logic [LANES*TABLE_WIDTH-1:0] table_mem[0:SAMPLE_BEATS-1];
    // No file by default: yosys elaborates every module with its defaults when reading it.
    initial if (TABLE_MEMFILE != "") $readmemh(TABLE_MEMFILE, table_mem);
    logic [BEAT_W-1:0] table_address;
    assign table_address = rst ? '0 : fire ? (beat == LAST_BEAT ? '0 : beat + 1'b1) : beat;
    always_ff @(posedge clk) table_word <= table_mem[table_address];
  end else begin : g_no_table
    assign table_word = '0;
  end

  // The broadcast operand's two banks.
  logic broadcast_word_valid, release_bank;
  logic [LANES*(BROADCAST_INPUT == 0 ? W0 : W1)-1:0] broadcast_word;
  assign release_bank = fire && beat == LAST_BEAT;
  if (BROADCAST_INPUT >= 0) begin : g_broadcast
    localparam int BW = BROADCAST_INPUT == 0 ? W0 : W1;
    logic [BW-1:0] banks[0:1][0:BROADCAST_SIZE-1];
    logic [1:0] bank_full;
    logic write_bank, read_bank, in_valid, in_fire;
    logic [BANK_AW-1:0] write_position;
    logic [BW-1:0] in_element;
    assign in_valid = BROADCAST_INPUT == 0 ? data_in_0_valid : data_in_1_valid;
    assign in_element = BROADCAST_INPUT == 0 ? BW'(data_in_0) : BW'(data_in_1);
    assign in_fire = in_valid && !bank_full[write_bank];
    assign broadcast_word_valid = bank_full[read_bank];
    for (genvar lane = 0; lane < LANES; lane++) begin : g_lane
      assign broadcast_word[lane*BW+:BW] = banks[read_bank][table_word[lane*TABLE_WIDTH+:BANK_AW]];
    end
    always_ff @(posedge clk) begin
      if (in_fire) banks[write_bank][write_position] <= in_element;
    end
    always_ff @(posedge clk) begin
      if (rst) begin
        bank_full <= 2'b00;
        write_bank <= 1'b0;
        read_bank <= 1'b0;
        write_position <= '0;
      end else begin
        if (in_fire) begin
          write_position <= write_position == LAST_POSITION ? '0 : write_position + 1'b1;
          if (write_position == LAST_POSITION) begin
            bank_full[write_bank] <= 1'b1;
            write_bank <= !write_bank;
          end
        end
        if (release_bank) begin
          bank_full[read_bank] <= 1'b0;
          read_bank <= !read_bank;
        end
      end
    end
    if (BROADCAST_INPUT == 0) begin : g_ready_0
      assign data_in_0_ready = !bank_full[write_bank];
    end else begin : g_ready_1
      assign data_in_1_ready = !bank_full[write_bank];
    end
  end else begin : g_no_broadcast
    assign broadcast_word_valid = 1'b0;
    assign broadcast_word = '0;
  end

  if (CONSTANT_INPUT == 0) begin : g_a_constant
    assign a_word = table_word;
    assign a_valid = 1'b1;
    assign data_in_0_ready = 1'b0;
  end else if (BROADCAST_INPUT == 0) begin : g_a_broadcast
    assign a_word = broadcast_word;
    assign a_valid = broadcast_word_valid;
  end else begin : g_a_stream
    assign a_word = data_in_0;
    assign a_valid = data_in_0_valid;
    assign data_in_0_ready = can_load && b_valid;
  end
  if (CONSTANT_INPUT == 1) begin : g_b_constant
    assign b_word = table_word;
    assign b_valid = 1'b1;
    assign data_in_1_ready = 1'b0;
  end else if (BROADCAST_INPUT == 1) begin : g_b_broadcast
    assign b_word = broadcast_word;
    assign b_valid = broadcast_word_valid;
  end else begin : g_b_stream
    assign b_word = data_in_1;
    assign b_valid = data_in_1_valid;
    assign data_in_1_ready = can_load && a_valid;
  end

  logic [LANES*EXACT_W-1:0] exact;
  logic [LANES*OUT_W-1:0] cast_result;
  for (genvar lane = 0; lane < LANES; lane++) begin : g_lane
    logic signed [W0-1:0] a;
    logic signed [W1-1:0] b;
    assign a = a_word[lane*W0+:W0];
    assign b = b_word[lane*W1+:W1];
    if (IS_MUL) begin : g_mul
      assign exact[lane*EXACT_W+:EXACT_W] = a * b;
    end else begin : g_add_sub
      logic signed [SUM_W-1:0] a_aligned, b_aligned;
      assign a_aligned = {{(SUM_W - W0) {a[W0-1]}}, a} <<< (ALIGN_F - F0);
      assign b_aligned = {{(SUM_W - W1) {b[W1-1]}}, b} <<< (ALIGN_F - F1);
      assign exact[lane*EXACT_W+:EXACT_W] =
          OPERATION == 1 ? a_aligned - b_aligned : a_aligned + b_aligned;
    end
  end

  mase_cast #(
      .IN_WIDTH (EXACT_W),
      .IN_FRAC  (EXACT_F),
      .OUT_WIDTH(OUT_W),
      .OUT_FRAC (DATA_OUT_0_PRECISION_1),
      .SYMMETRIC(OUT_SYMMETRIC),
      .LANES    (LANES)
  ) u_cast (
      .data_in (exact),
      .data_out(cast_result)
  );

  always_ff @(posedge clk) begin
    if (rst) data_out_0_valid <= 1'b0;
    else if (can_load) data_out_0_valid <= a_valid && b_valid;
  end
  always_ff @(posedge clk) begin
    if (fire) data_out_0 <= cast_result;
  end
endmodule
/* verilator lint_on UNUSEDPARAM */
/* verilator lint_on UNUSEDSIGNAL */
)sv"sv};
}  // namespace mase::verilog::rtl
