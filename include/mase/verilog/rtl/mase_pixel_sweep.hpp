#pragma once
// mase_pixel_sweep: the window sweep of mase_window_sweep over channels-last (H x W x C) streams,
// keeping KERNEL_Y + STRIDE_Y rows of every channel: the k.W.C line buffer of a convolution.
#include <mase/verilog/module_interface.hpp>
#include <mase/verilog/rtl/mase_sweep_stage.hpp>

namespace mase::verilog::rtl {
inline constexpr module_text mase_pixel_sweep{
    .name = "mase_pixel_sweep", .shared_parameters = sweep_geometry_parameters, .parameters = sweep_channel_parameters, .ports = sweep_ports,
    .description = R"sv(// mase_pixel_sweep: mase_window_sweep over channels-last samples (CHANNELS_LAST = 1): each sample
// is IN_ROWS rows of IN_COLS pixels of IN_CHANNELS channels, IN_LANES channels per beat. The rows
// go into one ring of R = (KERNEL_Y-1)*DILATION_Y + 1 + STRIDE_Y row slots, R*IN_COLS*IN_CHANNELS
// elements whatever IN_ROWS is. Output pixels are visited row-major, and at each the OUT_CHANNELS
// results leave OUT_LANES channels per beat (lanes over output channels).
// Two kinds of window, both T taps (cycles) per output beat:
// - ONE_CHANNEL (GROUPS = IN_CHANNELS = OUT_CHANNELS: pools, depthwise convolutions): lane l's
//   window covers input channel co + l only; IN_LANES = OUT_LANES, so one word read per tap
//   (ky, kx) serves every lane. T = KERNEL_Y*KERNEL_X.
// - otherwise every lane of a beat is in one group (OUT_LANES divides OUT_CHANNELS/GROUPS) and
//   reads the same element per tap (ky, kx, ci innermost); T = (IN_CHANNELS/GROUPS)*KERNEL_Y*KERNEL_X.
// kernel_addr is the tap's word in a ROM of OUT_LANES weights a word, beat b of a pixel's output
// channels at b*T + tap; out_channel is b (a bias ROM's word).
// Rows are numbered across samples (32-bit counters, compared by signed difference): an output row
// starts once its last row has arrived, and a row is written only into a slot whose old row no
// output row still to come reads.
)sv"sv,
    .body = R"sv(  localparam int XW = ELEMENT_WIDTH;
  localparam int W = IN_COLS;
  localparam int H = IN_ROWS;
  localparam int C = IN_CHANNELS;
  localparam int PI = IN_LANES;
  localparam int WO = OUT_COLS;
  localparam int HO = OUT_ROWS;
  localparam int CO = OUT_CHANNELS;
  localparam int PO = OUT_LANES;
  localparam int KX = KERNEL_X;
  localparam int KY = KERNEL_Y;
  localparam bit ONE_CHANNEL = GROUPS == C && CO == C;
  localparam int CG = ONE_CHANNEL ? 1 : C / GROUPS;  // input channels a window reads, per tap position
  localparam int BEATS_PER_GROUP = ONE_CHANNEL ? 1 : CO / GROUPS / PO;
  localparam int T = CG * KY * KX;                  // taps (cycles) per output beat
  localparam int SPAN = (KY - 1) * DILATION_Y + 1;  // rows a window covers
  localparam int R = SPAN + STRIDE_Y;               // row slots
  localparam int PIXEL_WORDS = C / PI;
  localparam int ROW_WORDS = W * PIXEL_WORDS;
  localparam int NW = R * ROW_WORDS;                // buffer words
  localparam int OB = CO / PO;                      // output beats per pixel
  localparam int KAW = CO * (C / GROUPS) * KY * KX > 1 ? $clog2(CO * (C / GROUPS) * KY * KX) : 1;
  localparam int MA = NW > 1 ? $clog2(NW) : 1;
  localparam int SW = R > 1 ? $clog2(R) : 1;
  localparam int PWW = PIXEL_WORDS > 1 ? $clog2(PIXEL_WORDS) : 1;  // word within a pixel
  localparam int LW = PI > 1 ? $clog2(PI) : 1;      // lane within a word
  localparam int CIW = CG > 1 ? $clog2(CG) : 1;
  localparam int BGW = BEATS_PER_GROUP > 1 ? $clog2(BEATS_PER_GROUP) : 1;
  localparam int KXW = KX > 1 ? $clog2(KX) : 1;
  localparam int KYW = KY > 1 ? $clog2(KY) : 1;
  localparam int OBW = OB > 1 ? $clog2(OB) : 1;
  localparam int OXW = WO > 1 ? $clog2(WO) : 1;
  localparam int OYW = HO > 1 ? $clog2(HO) : 1;
  localparam int COW = CO > 1 ? $clog2(CO) : 1;
  localparam int YW = $clog2(HO * STRIDE_Y + KY * DILATION_Y + PADDING_Y + H + 1) + 1;
  localparam int XCW = $clog2(WO * STRIDE_X + KX * DILATION_X + PADDING_X + W + 1) + 1;
  localparam logic [XW-1:0] PAD_CODE = PAD_MIN_CODE != 0 ? {1'b1, (XW - 1)'(0)} : '0;

  initial if (C % PI != 0 || CO % PO != 0 || (ONE_CHANNEL ? PI != PO : (CO / GROUPS) % PO != 0))
    $fatal(1, "mase_pixel_sweep: IN_LANES must divide the channels, and OUT_LANES the output channels of a group (equal to IN_LANES for one-channel windows)");

  // slot + step modulo R, for a step already reduced modulo R
  function automatic logic [SW-1:0] slot_add(input logic [SW-1:0] slot, input logic [SW:0] step);
    logic [SW:0] sum;
    sum = {1'b0, slot} + step;
    slot_add = sum >= (SW + 1)'(R) ? SW'(sum - (SW + 1)'(R)) : SW'(sum);
  endfunction

  localparam logic [SW:0] STEP_ROW = (SW + 1)'(STRIDE_Y % R);               // to the next output row's top row
  localparam logic [SW:0] STEP_TAP = (SW + 1)'(DILATION_Y % R);             // to the next kernel row
  localparam logic [SW:0] STEP_SAMPLE = (SW + 1)'(H % R);                   // to the next sample's row 0
  localparam logic [SW:0] STEP_TOP = (SW + 1)'((R - (PADDING_Y % R)) % R);  // from row 0 to the first window's top row
  // a group's first channel moves on by CG channels: whole words and lanes of a word
  localparam logic [PWW-1:0] GROUP_WORDS = PWW'(CG / PI);
  localparam logic [LW:0] GROUP_LANES = (LW + 1)'(CG % PI);

  localparam logic signed [YW-1:0] Y_START = YW'(-PADDING_Y);
  localparam logic signed [YW-1:0] Y_STEP = YW'(STRIDE_Y);
  localparam logic signed [YW-1:0] Y_DIL = YW'(DILATION_Y);
  localparam logic signed [YW-1:0] Y_LIMIT = YW'(H);
  localparam logic signed [XCW-1:0] X_START = XCW'(-PADDING_X);
  localparam logic signed [XCW-1:0] X_STEP = XCW'(STRIDE_X);
  localparam logic signed [XCW-1:0] X_DIL = XCW'(DILATION_X);
  localparam logic signed [XCW-1:0] X_LIMIT = XCW'(W);

  // ---------------- input side: rows into the ring ----------------
  logic [31:0] sample_row;      // the current output sample's row 0
  logic [MA-1:0] wr_addr;
  logic in_fire, rows_ready;
  logic signed [YW-1:0] iy_row;  // the current output row's top input row
  mase_ring_rows #(.ROW_WORDS(ROW_WORDS), .SLOTS(R), .MAP_ROWS(H), .SPAN(SPAN)) ring (
    .clk(clk), .rst(rst), .in_valid(data_in_0_valid), .in_ready(data_in_0_ready), .in_fire(in_fire),
    .wr_addr(wr_addr), .map_row(sample_row), .top_row(32'(iy_row)), .rows_ready(rows_ready)
  );

  // ---------------- issue stage: sweep oy, ox, output beat, then ky, kx, ci ----------------
  logic stall;
  logic [CIW-1:0] ci;
  logic [KXW-1:0] kx;
  logic [KYW-1:0] ky;
  logic [OBW-1:0] ob;
  logic [BGW-1:0] beat_in_group;
  logic [OXW-1:0] ox;
  logic [OYW-1:0] oy;
  logic ci_last, kx_last, ky_last, t_first, t_last, ob_last, ox_last, oy_last;
  logic [SW-1:0] sample_slot, top_slot, tap_slot;  // ring slots of row 0, the window's top row, this tap's row
  logic [PWW-1:0] group_word, tap_word;            // the group's first channel and this tap's, as word ...
  logic [LW-1:0] group_lane, tap_lane;             // ... and lane within it
  logic signed [YW-1:0] iy_tap, iy;
  logic signed [XCW-1:0] ix_pixel, ix_tap, ix;
  logic in_range;
  logic [MA-1:0] rd_addr;
  logic [KAW-1:0] kernel_base;

  assign issue = rows_ready && !stall;
  assign out_channel = COW'(ob);
  assign ci_last = ci == CIW'(CG - 1);
  assign kx_last = kx == KXW'(KX - 1);
  assign ky_last = ky == KYW'(KY - 1);
  assign t_first = ci == '0 && kx == '0 && ky == '0;
  assign t_last = ci_last && kx_last && ky_last;
  assign ob_last = ob == OBW'(OB - 1);
  assign ox_last = ox == OXW'(WO - 1);
  assign oy_last = oy == OYW'(HO - 1);
  assign iy = iy_row + iy_tap;
  assign ix = ix_pixel + ix_tap;
  assign in_range = !iy[YW-1] && iy < Y_LIMIT && !ix[XCW-1] && ix < X_LIMIT;
  // one-channel windows read the beat's own channels, word ob of the pixel
  logic [MA-1:0] pixel_word;
  assign pixel_word = ONE_CHANNEL ? MA'(ob) : MA'(tap_word);
  assign rd_addr = !in_range ? '0 : MA'(tap_slot) * MA'(ROW_WORDS) + MA'(ix) * MA'(PIXEL_WORDS) + pixel_word;

  // the group of the next output beat: the same, the next (CG channels on), or the first
  logic [PWW-1:0] next_group_word;
  logic [LW-1:0] next_group_lane;
  logic [LW:0] lane_sum;
  always_comb begin
    lane_sum = {1'b0, group_lane} + GROUP_LANES;
    if (ob_last) begin
      next_group_word = '0;
      next_group_lane = '0;
    end else if (beat_in_group != BGW'(BEATS_PER_GROUP - 1)) begin
      next_group_word = group_word;
      next_group_lane = group_lane;
    end else if (lane_sum >= (LW + 1)'(PI)) begin
      next_group_word = group_word + GROUP_WORDS + PWW'(1);
      next_group_lane = LW'(lane_sum - (LW + 1)'(PI));
    end else begin
      next_group_word = group_word + GROUP_WORDS;
      next_group_lane = LW'(lane_sum);
    end
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      ci <= '0;
      kx <= '0;
      ky <= '0;
      ob <= '0;
      beat_in_group <= '0;
      ox <= '0;
      oy <= '0;
      sample_row <= '0;
      sample_slot <= '0;
      top_slot <= STEP_TOP[SW-1:0];
      tap_slot <= STEP_TOP[SW-1:0];
      group_word <= '0;
      group_lane <= '0;
      tap_word <= '0;
      tap_lane <= '0;
      iy_row <= Y_START;
      iy_tap <= '0;
      ix_pixel <= X_START;
      ix_tap <= '0;
      kernel_addr <= '0;
      kernel_base <= '0;
    end else if (issue) begin
      if (!t_last) kernel_addr <= kernel_addr + KAW'(1);
      if (!ci_last) begin
        ci <= ci + CIW'(1);
        if (tap_lane == LW'(PI - 1)) begin
          tap_lane <= '0;
          tap_word <= tap_word + PWW'(1);
        end else begin
          tap_lane <= tap_lane + LW'(1);
        end
      end else begin
        ci <= '0;
        tap_word <= group_word;
        tap_lane <= group_lane;
        if (!kx_last) begin
          kx <= kx + KXW'(1);
          ix_tap <= ix_tap + X_DIL;
        end else begin
          kx <= '0;
          ix_tap <= '0;
          if (!ky_last) begin
            ky <= ky + KYW'(1);
            iy_tap <= iy_tap + Y_DIL;
            tap_slot <= slot_add(tap_slot, STEP_TAP);
          end else begin
            // last tap of this output beat: the next beat's channels, pixel, row or sample
            ky <= '0;
            iy_tap <= '0;
            tap_slot <= top_slot;
            group_word <= next_group_word;
            group_lane <= next_group_lane;
            tap_word <= next_group_word;
            tap_lane <= next_group_lane;
            beat_in_group <= ob_last || beat_in_group == BGW'(BEATS_PER_GROUP - 1) ? '0 : beat_in_group + BGW'(1);
            ob <= ob_last ? '0 : ob + OBW'(1);
            kernel_base <= ob_last ? '0 : kernel_base + KAW'(T);
            kernel_addr <= ob_last ? '0 : kernel_base + KAW'(T);
            if (ob_last) begin
              if (!ox_last) begin
                ox <= ox + OXW'(1);
                ix_pixel <= ix_pixel + X_STEP;
              end else begin
                ox <= '0;
                ix_pixel <= X_START;
                if (!oy_last) begin
                  oy <= oy + OYW'(1);
                  iy_row <= iy_row + Y_STEP;
                  top_slot <= slot_add(top_slot, STEP_ROW);
                  tap_slot <= slot_add(top_slot, STEP_ROW);
                end else begin
                  oy <= '0;
                  iy_row <= Y_START;
                  sample_row <= sample_row + 32'(H);
                  sample_slot <= slot_add(sample_slot, STEP_SAMPLE);
                  top_slot <= slot_add(slot_add(sample_slot, STEP_SAMPLE), STEP_TOP);
                  tap_slot <= slot_add(slot_add(sample_slot, STEP_SAMPLE), STEP_TOP);
                end
              end
            end
          end
        end
      end
    end
  end

  // ---------------- fold stage and output register ----------------
  mase_sweep_stage #(.RESULT_WIDTH(RESULT_WIDTH), .OUT_LANES(PO)) stage (
    .clk(clk), .rst(rst), .issue(issue), .issue_first(t_first), .issue_last(t_last), .stall(stall),
    .fold(fold), .fold_first(fold_first), .result(result),
    .data_out_0(data_out_0), .data_out_0_valid(data_out_0_valid), .data_out_0_ready(data_out_0_ready)
  );

  // One ring for every lane: a tap reads one word, whose lanes are one-channel windows' own
  // channels, or whose one element every lane of a group multiplies.
  logic [PI*XW-1:0] buffer [0:NW-1];
  logic [PI*XW-1:0] rd_word;
  /* verilator lint_off UNUSEDSIGNAL */
  logic [LW-1:0] fold_lane;  // one-channel windows take every lane of the word
  /* verilator lint_on UNUSEDSIGNAL */
  logic fold_in_range;

  always_ff @(posedge clk) begin
    if (in_fire) buffer[wr_addr] <= data_in_0;
    if (issue) begin
      rd_word <= buffer[rd_addr];
      fold_lane <= tap_lane;
      fold_in_range <= in_range;
    end
  end

  for (genvar l = 0; l < PO; l++) begin : g_lane
    if (ONE_CHANNEL) begin : g_own
      assign tap_data[l*XW +: XW] = fold_in_range ? rd_word[l*XW +: XW] : PAD_CODE;
    end else begin : g_shared
      assign tap_data[l*XW +: XW] = fold_in_range ? rd_word[fold_lane*XW +: XW] : PAD_CODE;
    end
  end

endmodule
)sv"sv};
}  // namespace mase::verilog::rtl
