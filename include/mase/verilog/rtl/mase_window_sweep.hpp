#pragma once
// mase_window_sweep: the window sweep shared by mase_conv2d and mase_pool2d (buffer, window/tap
// counters, per-lane reads, output register; they add only the fold). Over channels-last streams
// it is mase_pixel_sweep (k rows of every channel); over C x H x W streams mase_line_sweep (k rows
// of one channel) where each output channel reads only its own input channel, and
// mase_sample_sweep (two whole samples) otherwise; verilog/cost.hpp's line_buffered(node) states
// the same rule.
#include <string_view>

namespace mase::verilog::rtl {
inline constexpr std::string_view mase_window_sweep = R"sv(// mase_window_sweep: the window sweep shared by mase_conv2d and mase_pool2d.
// Over a stream of C x H x W samples (row-major, IN_LANES elements per beat), the OUT_CHANNELS x
// OUT_ROWS x OUT_COLS windows are visited row-major, OUT_LANES consecutive output columns per beat,
// one kernel tap (ci, ky, kx innermost) per cycle: T = (IN_CHANNELS/GROUPS)*KERNEL_Y*KERNEL_X
// cycles per beat. Output channel co reads input channels (co / (OUT_CHANNELS/GROUPS)) *
// (IN_CHANNELS/GROUPS) + ci. Where every output channel reads only its own input channel
// (GROUPS = IN_CHANNELS = OUT_CHANNELS: pools, depthwise convolutions) the stream's order lets
// mase_line_sweep keep a few rows; otherwise a window needs channels that arrive after its rows
// and mase_sample_sweep keeps whole samples. CHANNELS_LAST = 1: the stream is H x W x C instead and
// mase_pixel_sweep keeps k rows of every channel, its lanes over output channels (see there).
module mase_window_sweep #(
  parameter int ELEMENT_WIDTH = 8,
  parameter int RESULT_WIDTH = 8,
  parameter int IN_COLS = 8,
  parameter int IN_ROWS = 8,
  parameter int IN_CHANNELS = 1,
  parameter int IN_LANES = 1,
  parameter int OUT_COLS = 8,
  parameter int OUT_ROWS = 8,
  parameter int OUT_CHANNELS = 1,
  parameter int OUT_LANES = 1,
  parameter int KERNEL_X = 3,
  parameter int KERNEL_Y = 3,
  parameter int STRIDE_X = 1,
  parameter int STRIDE_Y = 1,
  parameter int PADDING_X = 1,
  parameter int PADDING_Y = 1,
  parameter int DILATION_X = 1,
  parameter int DILATION_Y = 1,
  parameter int GROUPS = 1,
  parameter int CHANNELS_LAST = 0,
  // what a tap outside the map reads: 0, or (1) the most negative code, which never wins a max
  parameter int PAD_MIN_CODE = 0
) (
  input  logic clk,
  input  logic rst,
  input  logic [IN_LANES*ELEMENT_WIDTH-1:0] data_in_0,
  input  logic data_in_0_valid,
  output logic data_in_0_ready,
  // issue stage: a tap is issued this cycle, for output channel out_channel; kernel_addr is the
  // tap's place in PyTorch's weight layout, out_channel*T + (ci*KERNEL_Y + ky)*KERNEL_X + kx
  output logic issue,
  output logic [(OUT_CHANNELS > 1 ? $clog2(OUT_CHANNELS) : 1)-1:0] out_channel,
  output logic [(OUT_CHANNELS * (IN_CHANNELS / GROUPS) * KERNEL_Y * KERNEL_X > 1 ?
                 $clog2(OUT_CHANNELS * (IN_CHANNELS / GROUPS) * KERNEL_Y * KERNEL_X) : 1)-1:0] kernel_addr,
  // fold stage: fold this cycle's tap_data (lane l: the element under lane l's tap) into the lanes'
  // running values, restarting them where fold_first; result is the lanes' cast values including it
  output logic fold,
  output logic fold_first,
  output logic [OUT_LANES*ELEMENT_WIDTH-1:0] tap_data,
  input  logic [OUT_LANES*RESULT_WIDTH-1:0] result,
  output logic [OUT_LANES*RESULT_WIDTH-1:0] data_out_0,
  output logic data_out_0_valid,
  input  logic data_out_0_ready
);
  if (CHANNELS_LAST != 0) begin : g_pixels
    mase_pixel_sweep #(
      .ELEMENT_WIDTH(ELEMENT_WIDTH), .RESULT_WIDTH(RESULT_WIDTH), .IN_COLS(IN_COLS), .IN_ROWS(IN_ROWS),
      .IN_CHANNELS(IN_CHANNELS), .IN_LANES(IN_LANES), .OUT_COLS(OUT_COLS), .OUT_ROWS(OUT_ROWS),
      .OUT_CHANNELS(OUT_CHANNELS), .OUT_LANES(OUT_LANES), .KERNEL_X(KERNEL_X), .KERNEL_Y(KERNEL_Y),
      .STRIDE_X(STRIDE_X), .STRIDE_Y(STRIDE_Y), .PADDING_X(PADDING_X), .PADDING_Y(PADDING_Y),
      .DILATION_X(DILATION_X), .DILATION_Y(DILATION_Y), .GROUPS(GROUPS), .PAD_MIN_CODE(PAD_MIN_CODE)
    ) sweep (
      .clk(clk), .rst(rst), .data_in_0(data_in_0), .data_in_0_valid(data_in_0_valid),
      .data_in_0_ready(data_in_0_ready), .issue(issue), .out_channel(out_channel), .kernel_addr(kernel_addr),
      .fold(fold), .fold_first(fold_first), .tap_data(tap_data), .result(result), .data_out_0(data_out_0),
      .data_out_0_valid(data_out_0_valid), .data_out_0_ready(data_out_0_ready)
    );
  end else if (GROUPS == IN_CHANNELS && OUT_CHANNELS == IN_CHANNELS) begin : g_lines
    mase_line_sweep #(
      .ELEMENT_WIDTH(ELEMENT_WIDTH), .RESULT_WIDTH(RESULT_WIDTH), .IN_COLS(IN_COLS), .IN_ROWS(IN_ROWS),
      .IN_LANES(IN_LANES), .OUT_COLS(OUT_COLS), .OUT_ROWS(OUT_ROWS),
      .OUT_CHANNELS(OUT_CHANNELS), .OUT_LANES(OUT_LANES), .KERNEL_X(KERNEL_X), .KERNEL_Y(KERNEL_Y),
      .STRIDE_X(STRIDE_X), .STRIDE_Y(STRIDE_Y), .PADDING_X(PADDING_X), .PADDING_Y(PADDING_Y),
      .DILATION_X(DILATION_X), .DILATION_Y(DILATION_Y), .PAD_MIN_CODE(PAD_MIN_CODE)
    ) sweep (
      .clk(clk), .rst(rst), .data_in_0(data_in_0), .data_in_0_valid(data_in_0_valid),
      .data_in_0_ready(data_in_0_ready), .issue(issue), .out_channel(out_channel), .kernel_addr(kernel_addr),
      .fold(fold), .fold_first(fold_first), .tap_data(tap_data), .result(result), .data_out_0(data_out_0),
      .data_out_0_valid(data_out_0_valid), .data_out_0_ready(data_out_0_ready)
    );
  end else begin : g_samples
    mase_sample_sweep #(
      .ELEMENT_WIDTH(ELEMENT_WIDTH), .RESULT_WIDTH(RESULT_WIDTH), .IN_COLS(IN_COLS), .IN_ROWS(IN_ROWS),
      .IN_CHANNELS(IN_CHANNELS), .IN_LANES(IN_LANES), .OUT_COLS(OUT_COLS), .OUT_ROWS(OUT_ROWS),
      .OUT_CHANNELS(OUT_CHANNELS), .OUT_LANES(OUT_LANES), .KERNEL_X(KERNEL_X), .KERNEL_Y(KERNEL_Y),
      .STRIDE_X(STRIDE_X), .STRIDE_Y(STRIDE_Y), .PADDING_X(PADDING_X), .PADDING_Y(PADDING_Y),
      .DILATION_X(DILATION_X), .DILATION_Y(DILATION_Y), .GROUPS(GROUPS), .PAD_MIN_CODE(PAD_MIN_CODE)
    ) sweep (
      .clk(clk), .rst(rst), .data_in_0(data_in_0), .data_in_0_valid(data_in_0_valid),
      .data_in_0_ready(data_in_0_ready), .issue(issue), .out_channel(out_channel), .kernel_addr(kernel_addr),
      .fold(fold), .fold_first(fold_first), .tap_data(tap_data), .result(result), .data_out_0(data_out_0),
      .data_out_0_valid(data_out_0_valid), .data_out_0_ready(data_out_0_ready)
    );
  end
endmodule
)sv";
}  // namespace mase::verilog::rtl
