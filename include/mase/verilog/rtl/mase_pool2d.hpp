#pragma once
// mase_pool2d: streaming 2-D max / average pooling with the same buffered window sweep as
// mase_conv2d; padding never wins a max and counts as zero in an average, whose exact window sum
// mase_reciprocal_divide divides by the pool's one divisor (eval/mean_rule.hpp).
#include <mase/verilog/module_interface.hpp>

namespace mase::verilog::rtl {
inline constexpr module_parameter mase_pool2d_parameters[] = {
    {"MODE", "0"}, {"DATA_IN_0_PRECISION_0", "8"}, {"DATA_IN_0_PRECISION_1", "4"},
    {"DATA_IN_0_TENSOR_SIZE_DIM_0", "8"}, {"DATA_IN_0_TENSOR_SIZE_DIM_1", "8"}, {"DATA_IN_0_TENSOR_SIZE_DIM_2", "1"},
    {"DATA_IN_0_PARALLELISM_DIM_0", "1"}, {"DATA_OUT_0_PRECISION_0", "8"}, {"DATA_OUT_0_PRECISION_1", "4"},
    {"DATA_OUT_0_TENSOR_SIZE_DIM_0", "4"}, {"DATA_OUT_0_TENSOR_SIZE_DIM_1", "4"},
    {"DATA_OUT_0_TENSOR_SIZE_DIM_2", "1"}, {"DATA_OUT_0_PARALLELISM_DIM_0", "1"}, {"KERNEL_X", "2"},
    {"KERNEL_Y", "2"}, {"STRIDE_X", "2"}, {"STRIDE_Y", "2"}, {"PADDING_X", "0"}, {"PADDING_Y", "0"},
    {"DILATION_X", "1"}, {"DILATION_Y", "1"}, {"OUT_SYMMETRIC", "0"},
    {"CHANNELS_LAST", "0", "int", "the streams are H x W x C (mase_pixel_sweep)"},
    {"NUMERATOR_SHIFT", "0", "int", "MODE 1: the mean rule's division (mase_reciprocal_divide) of sums of KERNEL_X*KERNEL_Y codes"},
    {"NUMERATOR_WIDTH", "10"}, {"MULTIPLIER_WIDTH", "1"}, {"SHIFT", "0"}, {"OFFSET", "64'd0", "logic [63:0]"},
    {"OFFSET_QUOTIENT", "64'd0", "logic [63:0]"}, {"MULTIPLIER", "64'd1", "logic [63:0]"},
};
inline constexpr module_port mase_pool2d_ports[] = {
    {in, "clk"}, {in, "rst"},
    {in, "data_in_0", "DATA_IN_0_PARALLELISM_DIM_0*DATA_IN_0_PRECISION_0", stream},
    {out, "data_out_0", "DATA_OUT_0_PARALLELISM_DIM_0*DATA_OUT_0_PRECISION_0", stream},
};
inline constexpr module_text mase_pool2d{
    .name = "mase_pool2d", .parameters = mase_pool2d_parameters, .ports = mase_pool2d_ports,
    .description = R"sv(// mase_pool2d: 2-D max (MODE 0) or average (MODE 1: every window's sum divided by the same
// constant, the mean rule's reciprocal multiply) pooling over a stream of C x H x W samples (H x W x C where CHANNELS_LAST). mase_window_sweep buffers each sample and visits the
// windows (one group per channel); here each of the PO output lanes folds one window element per cycle.
)sv"sv,
    .body = R"sv(  localparam int XW = DATA_IN_0_PRECISION_0;
  localparam int OW = DATA_OUT_0_PRECISION_0;
  localparam int PO = DATA_OUT_0_PARALLELISM_DIM_0;
  localparam int AREA_LOG2 = KERNEL_X * KERNEL_Y > 1 ? $clog2(KERNEL_X * KERNEL_Y) : 0;
  // max keeps an input code; average keeps the exact window sum
  localparam int VW = MODE == 0 ? XW : XW + AREA_LOG2;
  localparam int CO = DATA_OUT_0_TENSOR_SIZE_DIM_2;   // = C
  localparam int COW = CO > 1 ? $clog2(CO) : 1;
  localparam int KAW = CO * KERNEL_Y * KERNEL_X > 1 ? $clog2(CO * KERNEL_Y * KERNEL_X) : 1;

  logic fold, fold_first;
  logic [PO*XW-1:0] tap_data;
  logic [PO*OW-1:0] cast_out;
  // the sweep's issue-stage outputs address weights, which pooling has none of
  logic unused_issue;
  logic [COW-1:0] unused_channel;
  logic [KAW-1:0] unused_kernel_addr;

  mase_window_sweep #(
    .ELEMENT_WIDTH(XW), .RESULT_WIDTH(OW), .GROUPS(CO), .CHANNELS_LAST(CHANNELS_LAST),  // each channel is its own group
    // padding never wins a max (it reads the lowest code) and counts as zero in an average
    .PAD_MIN_CODE(MODE == 0 ? 1 : 0),
    .IN_COLS(DATA_IN_0_TENSOR_SIZE_DIM_0), .IN_ROWS(DATA_IN_0_TENSOR_SIZE_DIM_1),
    .IN_CHANNELS(DATA_IN_0_TENSOR_SIZE_DIM_2), .IN_LANES(DATA_IN_0_PARALLELISM_DIM_0),
    .OUT_COLS(DATA_OUT_0_TENSOR_SIZE_DIM_0), .OUT_ROWS(DATA_OUT_0_TENSOR_SIZE_DIM_1),
    .OUT_CHANNELS(CO), .OUT_LANES(PO),
    .KERNEL_X(KERNEL_X), .KERNEL_Y(KERNEL_Y), .STRIDE_X(STRIDE_X), .STRIDE_Y(STRIDE_Y),
    .PADDING_X(PADDING_X), .PADDING_Y(PADDING_Y), .DILATION_X(DILATION_X), .DILATION_Y(DILATION_Y)
  ) sweep (
    .clk(clk), .rst(rst),
    .data_in_0(data_in_0), .data_in_0_valid(data_in_0_valid), .data_in_0_ready(data_in_0_ready),
    .issue(unused_issue), .out_channel(unused_channel), .kernel_addr(unused_kernel_addr),
    .fold(fold), .fold_first(fold_first), .tap_data(tap_data), .result(cast_out),
    .data_out_0(data_out_0), .data_out_0_valid(data_out_0_valid), .data_out_0_ready(data_out_0_ready)
  );

  // ---------------- fold stage: one window element per lane per cycle ----------------
  logic [PO*VW-1:0] value_next_lanes;

  for (genvar l = 0; l < PO; l++) begin : g_lane
    logic signed [VW-1:0] x, value, value_next;

    assign x = VW'($signed(tap_data[l*XW +: XW]));
    if (MODE == 0) begin : g_max
      assign value_next = (fold_first || x > value) ? x : value;
    end else begin : g_average
      // the sum of KX*KY codes cannot overflow VW bits
      assign value_next = (fold_first ? VW'(0) : value) + x;
    end
    assign value_next_lanes[l*VW +: VW] = value_next;

    always_ff @(posedge clk) begin
      if (fold) value <= value_next;
    end
  end

  if (MODE == 0) begin : g_max_cast
    mase_cast #(
      .IN_WIDTH(VW), .IN_FRAC(DATA_IN_0_PRECISION_1), .OUT_WIDTH(OW), .OUT_FRAC(DATA_OUT_0_PRECISION_1),
      .SYMMETRIC(OUT_SYMMETRIC), .LANES(PO)
    ) out_cast (
      .data_in(value_next_lanes), .data_out(cast_out)
    );
  end else begin : g_average_divide
    mase_reciprocal_divide #(
      .SUM_WIDTH(VW), .NUMERATOR_SHIFT(NUMERATOR_SHIFT), .NUMERATOR_WIDTH(NUMERATOR_WIDTH),
      .MULTIPLIER_WIDTH(MULTIPLIER_WIDTH), .SHIFT(SHIFT), .OFFSET(OFFSET), .OFFSET_QUOTIENT(OFFSET_QUOTIENT),
      .MULTIPLIER(MULTIPLIER), .OUT_WIDTH(OW), .OUT_FRAC(DATA_OUT_0_PRECISION_1), .OUT_SYMMETRIC(OUT_SYMMETRIC),
      .LANES(PO)
    ) out_divide (
      .data_in(value_next_lanes), .data_out(cast_out)
    );
  end
endmodule
)sv"sv};
}  // namespace mase::verilog::rtl
