#pragma once
// mase_conv2d: streaming 2-D convolution (groups, stride, padding, dilation), exact MACs and one
// cast; a two-bank sample buffer lets the next sample load while PO lanes sweep the windows.
#include <mase/verilog/module_interface.hpp>

namespace mase::verilog::rtl {
inline constexpr module_parameter mase_conv2d_parameters[] = {
    {"DATA_IN_0_PRECISION_0", "8"}, {"DATA_IN_0_PRECISION_1", "4"}, {"DATA_IN_0_TENSOR_SIZE_DIM_0", "8"},
    {"DATA_IN_0_TENSOR_SIZE_DIM_1", "8"}, {"DATA_IN_0_TENSOR_SIZE_DIM_2", "1"}, {"DATA_IN_0_PARALLELISM_DIM_0", "1"},
    {"WEIGHT_PRECISION_0", "8"}, {"WEIGHT_PRECISION_1", "4"}, {"DATA_OUT_0_PRECISION_0", "8"},
    {"DATA_OUT_0_PRECISION_1", "4"}, {"DATA_OUT_0_TENSOR_SIZE_DIM_0", "8"}, {"DATA_OUT_0_TENSOR_SIZE_DIM_1", "8"},
    {"DATA_OUT_0_TENSOR_SIZE_DIM_2", "1"}, {"DATA_OUT_0_PARALLELISM_DIM_0", "1"}, {"KERNEL_X", "3"},
    {"KERNEL_Y", "3"}, {"STRIDE_X", "1"}, {"STRIDE_Y", "1"}, {"PADDING_X", "1"}, {"PADDING_Y", "1"},
    {"DILATION_X", "1"}, {"DILATION_Y", "1"}, {"GROUPS", "1"}, {"HAS_BIAS", "0"}, {"CHANNELS_LAST", "0"},
    {"ACCUMULATOR_WIDTH", "24"}, {"OUT_SYMMETRIC", "0"}, {"WEIGHT_MEMFILE", "\"weight.mem\"", ""},
    {"BIAS_MEMFILE", "\"bias.mem\"", ""},
};
inline constexpr module_port mase_conv2d_ports[] = {
    {in, "clk"}, {in, "rst"},
    {in, "data_in_0", "DATA_IN_0_PARALLELISM_DIM_0*DATA_IN_0_PRECISION_0", stream},
    {out, "data_out_0", "DATA_OUT_0_PARALLELISM_DIM_0*DATA_OUT_0_PRECISION_0", stream},
};
inline constexpr module_text mase_conv2d{
    .name = "mase_conv2d", .parameters = mase_conv2d_parameters, .ports = mase_conv2d_ports,
    .description = R"sv(// mase_conv2d: 2-D convolution (groups, stride, padding, dilation) over a stream of C x H x W samples.
// mase_window_sweep buffers each sample (two banks) and visits the windows, PO consecutive ox per
// output beat; here each output lane does one exact multiply-accumulate per tap, with the weight
// from a synchronous ROM read in the issue cycle, and the accumulator is cast once at the end.
// CHANNELS_LAST = 1: the streams are H x W x C, the sweep keeps rows (mase_pixel_sweep) and the PO
// lanes are output channels, so a ROM word holds PO weights (lane 0 lowest; word b*T + tap, tap
// (ky, kx, ci) with ci innermost) and a bias word PO biases.
)sv"sv,
    .body = R"sv(  localparam int XW = DATA_IN_0_PRECISION_0;
  localparam int WW = WEIGHT_PRECISION_0;
  localparam int OW = DATA_OUT_0_PRECISION_0;
  localparam int CO = DATA_OUT_0_TENSOR_SIZE_DIM_2;
  localparam int PO = DATA_OUT_0_PARALLELISM_DIM_0;
  localparam int AW = ACCUMULATOR_WIDTH;
  localparam int T = DATA_IN_0_TENSOR_SIZE_DIM_2 / GROUPS * KERNEL_Y * KERNEL_X;  // MACs per output beat
  localparam int LANE_WEIGHTS = CHANNELS_LAST != 0 ? PO : 1;  // weights (and biases) a ROM word holds
  localparam int WDEPTH = CO * T;
  localparam int WWORDS = WDEPTH / LANE_WEIGHTS;
  localparam int WWAW = WWORDS > 1 ? $clog2(WWORDS) : 1;
  localparam int BWORDS = CO / LANE_WEIGHTS;
  localparam int BWAW = BWORDS > 1 ? $clog2(BWORDS) : 1;
  localparam int WAW = WDEPTH > 1 ? $clog2(WDEPTH) : 1;
  localparam int COW = CO > 1 ? $clog2(CO) : 1;
  localparam int PW = XW + WW;             // exact product width

  logic issue, fold, fold_first;
  logic [COW-1:0] out_channel;
  logic [WAW-1:0] w_addr;
  logic [PO*XW-1:0] tap_data;
  logic [PO*OW-1:0] cast_out;

  mase_window_sweep #(
    .ELEMENT_WIDTH(XW), .RESULT_WIDTH(OW), .GROUPS(GROUPS), .CHANNELS_LAST(CHANNELS_LAST),
    .PAD_MIN_CODE(0),  // x = 0 outside the map
    .IN_COLS(DATA_IN_0_TENSOR_SIZE_DIM_0), .IN_ROWS(DATA_IN_0_TENSOR_SIZE_DIM_1),
    .IN_CHANNELS(DATA_IN_0_TENSOR_SIZE_DIM_2), .IN_LANES(DATA_IN_0_PARALLELISM_DIM_0),
    .OUT_COLS(DATA_OUT_0_TENSOR_SIZE_DIM_0), .OUT_ROWS(DATA_OUT_0_TENSOR_SIZE_DIM_1),
    .OUT_CHANNELS(CO), .OUT_LANES(PO),
    .KERNEL_X(KERNEL_X), .KERNEL_Y(KERNEL_Y), .STRIDE_X(STRIDE_X), .STRIDE_Y(STRIDE_Y),
    .PADDING_X(PADDING_X), .PADDING_Y(PADDING_Y), .DILATION_X(DILATION_X), .DILATION_Y(DILATION_Y)
  ) sweep (
    .clk(clk), .rst(rst),
    .data_in_0(data_in_0), .data_in_0_valid(data_in_0_valid), .data_in_0_ready(data_in_0_ready),
    .issue(issue), .out_channel(out_channel), .kernel_addr(w_addr),
    .fold(fold), .fold_first(fold_first), .tap_data(tap_data), .result(cast_out),
    .data_out_0(data_out_0), .data_out_0_valid(data_out_0_valid), .data_out_0_ready(data_out_0_ready)
  );

  // ---------------- weights and bias: synchronous ROMs read in the issue cycle ----------------
  logic [LANE_WEIGHTS*WW-1:0] w_q;
  logic [LANE_WEIGHTS*AW-1:0] bias_q;

  // the sweep's word addresses stay below the ROMs' depths (narrower where a word holds PO)
  /* verilator lint_off UNUSEDSIGNAL */
  logic [WAW-1:0] w_addr_unused;
  logic [COW-1:0] channel_unused;
  /* verilator lint_on UNUSEDSIGNAL */
  assign w_addr_unused = w_addr;
  assign channel_unused = out_channel;

  mase_rom #(.WIDTH(LANE_WEIGHTS * WW), .DEPTH(WWORDS), .MEMFILE(WEIGHT_MEMFILE)) weight_rom (
    .clk(clk), .en(issue), .addr(w_addr[WWAW-1:0]), .q(w_q)
  );

  if (HAS_BIAS != 0) begin : g_bias
    mase_rom #(.WIDTH(LANE_WEIGHTS * AW), .DEPTH(BWORDS), .MEMFILE(BIAS_MEMFILE)) bias_rom (
      .clk(clk), .en(issue), .addr(out_channel[BWAW-1:0]), .q(bias_q)
    );
  end else begin : g_no_bias
    assign bias_q = '0;
  end

  // ---------------- MAC stage: one multiply-accumulate per lane per tap ----------------
  logic [PO*AW-1:0] acc_next_lanes;

  for (genvar l = 0; l < PO; l++) begin : g_lane
    logic signed [XW-1:0] x;
    logic signed [PW-1:0] prod;
    logic signed [AW-1:0] acc, acc_next;

    localparam int WORD_LANE = CHANNELS_LAST != 0 ? l : 0;  // this lane's weight and bias in a ROM word
    assign x = tap_data[l*XW +: XW];
    assign prod = PW'(x) * PW'($signed(w_q[WORD_LANE*WW +: WW]));
    assign acc_next = (fold_first ? $signed(bias_q[WORD_LANE*AW +: AW]) : acc) + AW'(prod);
    assign acc_next_lanes[l*AW +: AW] = acc_next;

    always_ff @(posedge clk) begin
      if (fold) acc <= acc_next;
    end
  end

  mase_cast #(
    .IN_WIDTH(AW), .IN_FRAC(DATA_IN_0_PRECISION_1 + WEIGHT_PRECISION_1), .OUT_WIDTH(OW),
    .OUT_FRAC(DATA_OUT_0_PRECISION_1), .SYMMETRIC(OUT_SYMMETRIC), .LANES(PO)
  ) out_cast (
    .data_in(acc_next_lanes), .data_out(cast_out)
  );
endmodule
)sv"sv};
}  // namespace mase::verilog::rtl
