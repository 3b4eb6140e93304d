#pragma once
// mase_window_sweep: the window sweep shared by mase_conv2d and mase_pool2d (buffer, window/tap
// counters, per-lane reads, output register; they add only the fold). Over channels-last streams
// it is mase_pixel_sweep (k rows of every channel); over C x H x W streams mase_line_sweep (k rows
// of one channel) where each output channel reads only its own input channel, and
// mase_sample_sweep (two whole samples) otherwise; verilog/cost.hpp's line_buffered(node) states
// the same rule.
#include <mase/verilog/module_interface.hpp>
#include <mase/verilog/rtl/mase_sweep_stage.hpp>

namespace mase::verilog::rtl {
inline constexpr module_parameter mase_window_sweep_parameters[] = {{"IN_CHANNELS", "1"}, {"GROUPS", "1"}, {"CHANNELS_LAST", "0"}};
inline constexpr module_text mase_window_sweep{
    .name = "mase_window_sweep", .shared_parameters = sweep_geometry_parameters, .parameters = mase_window_sweep_parameters, .ports = sweep_ports,
    .description = R"sv(// mase_window_sweep: the window sweep shared by mase_conv2d and mase_pool2d.
// Over a stream of C x H x W samples (row-major, IN_LANES elements per beat), the OUT_CHANNELS x
// OUT_ROWS x OUT_COLS windows are visited row-major, OUT_LANES consecutive output columns per beat,
// one kernel tap (ci, ky, kx innermost) per cycle: T = (IN_CHANNELS/GROUPS)*KERNEL_Y*KERNEL_X
// cycles per beat. Output channel co reads input channels (co / (OUT_CHANNELS/GROUPS)) *
// (IN_CHANNELS/GROUPS) + ci. Where every output channel reads only its own input channel
// (GROUPS = IN_CHANNELS = OUT_CHANNELS: pools, depthwise convolutions) the stream's order lets
// mase_line_sweep keep a few rows; otherwise a window needs channels that arrive after its rows
// and mase_sample_sweep keeps whole samples. CHANNELS_LAST = 1: the stream is H x W x C instead and
// mase_pixel_sweep keeps k rows of every channel, its lanes over output channels (see there).
)sv"sv,
    .body = R"sv(  if (CHANNELS_LAST != 0) begin : g_pixels
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
)sv"sv};
}  // namespace mase::verilog::rtl
