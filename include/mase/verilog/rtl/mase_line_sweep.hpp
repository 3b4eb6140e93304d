#pragma once
// mase_line_sweep: the window sweep of mase_window_sweep for windows over one channel (pools,
// depthwise convolutions), keeping KERNEL_Y + STRIDE_Y rows of one channel instead of whole samples.
#include <mase/verilog/module_interface.hpp>
#include <mase/verilog/rtl/mase_sweep_stage.hpp>

namespace mase::verilog::rtl {
inline constexpr module_text mase_line_sweep{
    .name = "mase_line_sweep", .shared_parameters = sweep_geometry_parameters, .ports = line_sweep_ports,
    .description = R"sv(// mase_line_sweep: mase_window_sweep where output channel c's windows cover input channel c only
// (OUT_CHANNELS = IN_CHANNELS, one group per channel). The stream is a run of H x W planes, one per
// channel and sample, and a window needs only rows of its own plane, so the input rows go into a
// ring of R = (KERNEL_Y-1)*DILATION_Y + 1 + STRIDE_Y row slots (a window's rows and the next output
// row's new ones), R*IN_COLS elements per output lane, whatever C and H are. IN_LANES divides
// IN_COLS, so a beat never straddles two rows (add_hardware_metadata narrows the input to suit).
// Rows are numbered across planes and samples (32-bit counters, compared by signed difference):
// an output row starts once its last row has arrived, and a row is written only into a slot whose
// old row no output row still to come reads.
)sv"sv,
    .body = R"sv(  localparam int XW = ELEMENT_WIDTH;
  localparam int W = IN_COLS;
  localparam int H = IN_ROWS;
  localparam int PI = IN_LANES;
  localparam int WO = OUT_COLS;
  localparam int HO = OUT_ROWS;
  localparam int CO = OUT_CHANNELS;
  localparam int PO = OUT_LANES;
  localparam int KX = KERNEL_X;
  localparam int KY = KERNEL_Y;
  localparam int T = KY * KX;                      // taps (cycles) per output beat
  localparam int SPAN = (KY - 1) * DILATION_Y + 1; // rows a window covers
  localparam int R = SPAN + STRIDE_Y;              // row slots
  localparam int WW = W / PI;                      // buffer words per row
  localparam int NW = R * WW;                      // buffer words
  localparam int OXB = WO / PO;                    // output beats per output row
  localparam int KDEPTH = CO * T;

  localparam int QW = $clog2(WW + 1) + 1;          // word within a row (kept modulo 2^QW)
  localparam int RW = PI > 1 ? $clog2(PI) : 1;     // lane within a word
  localparam int PRW = QW + RW;
  localparam int MA = NW > 1 ? $clog2(NW) : 1;
  localparam int SW = R > 1 ? $clog2(R) : 1;       // row slot
  localparam int KAW = KDEPTH > 1 ? $clog2(KDEPTH) : 1;
  localparam int KXW = KX > 1 ? $clog2(KX) : 1;
  localparam int KYW = KY > 1 ? $clog2(KY) : 1;
  localparam int OXW = OXB > 1 ? $clog2(OXB) : 1;
  localparam int OYW = HO > 1 ? $clog2(HO) : 1;
  localparam int COW = CO > 1 ? $clog2(CO) : 1;
  localparam int YW = $clog2(HO * STRIDE_Y + KY * DILATION_Y + PADDING_Y + H + 1) + 1;
  localparam int XCW = $clog2(WO * STRIDE_X + KX * DILATION_X + PADDING_X + W + 1) + 1;
  localparam logic [XW-1:0] PAD_CODE = PAD_MIN_CODE != 0 ? {1'b1, (XW - 1)'(0)} : '0;

  // A column e = q*PI + r is kept as the pair {q, r} and only moved by constant steps (no divider
  // by PI); q wraps modulo 2^QW, exact for every column of the map, and the others read PAD_CODE.
  localparam logic [RW:0] PI_R = (RW + 1)'(PI);

  function automatic logic [PRW-1:0] to_pair(input int e);
    int r;
    r = ((e % PI) + PI) % PI;
    to_pair = {QW'((e - r) / PI), RW'(r)};
  endfunction

  function automatic logic [PRW-1:0] pair_add(input logic [PRW-1:0] a, input logic [PRW-1:0] b);
    logic [RW:0] r_sum;
    logic [QW-1:0] q_sum;
    r_sum = {1'b0, a[RW-1:0]} + {1'b0, b[RW-1:0]};
    q_sum = a[PRW-1:RW] + b[PRW-1:RW];
    if (r_sum >= PI_R) pair_add = {q_sum + QW'(1), RW'(r_sum - PI_R)};
    else pair_add = {q_sum, r_sum[RW-1:0]};
  endfunction

  // slot + step modulo R, for a step already reduced modulo R
  function automatic logic [SW-1:0] slot_add(input logic [SW-1:0] slot, input logic [SW:0] step);
    logic [SW:0] sum;
    sum = {1'b0, slot} + step;
    slot_add = sum >= (SW + 1)'(R) ? SW'(sum - (SW + 1)'(R)) : SW'(sum);
  endfunction

  localparam logic [SW:0] STEP_ROW = (SW + 1)'(STRIDE_Y % R);               // to the next output row's top row
  localparam logic [SW:0] STEP_TAP = (SW + 1)'(DILATION_Y % R);             // to the next kernel row
  localparam logic [SW:0] STEP_PLANE = (SW + 1)'(H % R);                    // to the next plane's row 0
  localparam logic [SW:0] STEP_TOP = (SW + 1)'((R - (PADDING_Y % R)) % R);  // from row 0 to the first window's top row

  localparam logic [PRW-1:0] P_ORIGIN = to_pair(-PADDING_X);
  localparam logic [PRW-1:0] P_KX = to_pair(DILATION_X);
  localparam logic [PRW-1:0] P_OX = to_pair(PO * STRIDE_X);

  localparam logic signed [YW-1:0] Y_START = YW'(-PADDING_Y);
  localparam logic signed [YW-1:0] Y_STEP = YW'(STRIDE_Y);
  localparam logic signed [YW-1:0] Y_DIL = YW'(DILATION_Y);
  localparam logic signed [YW-1:0] Y_LIMIT = YW'(H);
  localparam logic signed [XCW-1:0] X_START = XCW'(-PADDING_X);
  localparam logic signed [XCW-1:0] X_STEP = XCW'(PO * STRIDE_X);
  localparam logic signed [XCW-1:0] X_DIL = XCW'(DILATION_X);
  localparam logic signed [XCW-1:0] X_LIMIT = XCW'(W);

  // ---------------- input side: rows into the ring ----------------
  logic [31:0] plane_row;      // the current output plane's row 0
  logic [MA-1:0] wr_addr;
  logic in_fire, rows_ready;
  logic signed [YW-1:0] iy_row;  // the current output row's top input row
  mase_ring_rows #(.ROW_WORDS(WW), .SLOTS(R), .MAP_ROWS(H), .SPAN(SPAN)) ring (
    .clk(clk), .rst(rst), .in_valid(data_in_0_valid), .in_ready(data_in_0_ready), .in_fire(in_fire),
    .wr_addr(wr_addr), .map_row(plane_row), .top_row(32'(iy_row)), .rows_ready(rows_ready)
  );

  // ---------------- issue stage: sweep co, oy, ox-beat, then ky, kx ----------------
  logic stall;
  logic [KXW-1:0] kx;
  logic [KYW-1:0] ky;
  logic [OXW-1:0] oxb;
  logic [OYW-1:0] oy;
  logic [COW-1:0] co;
  logic kx_last, ky_last, t_first, t_last, ox_last, oy_last, co_last;
  logic [SW-1:0] plane_slot, top_slot, tap_slot;  // ring slots of row 0, the window's top row, this tap's row
  logic [PRW-1:0] col_beat, col_tap, tap_col;
  logic signed [YW-1:0] iy_tap, iy;
  logic signed [XCW-1:0] ix_beat, ix_tap;
  logic row_in_range;
  logic [KAW-1:0] kernel_base;

  assign issue = rows_ready && !stall;
  assign out_channel = co;
  assign kx_last = kx == KXW'(KX - 1);
  assign ky_last = ky == KYW'(KY - 1);
  assign t_first = kx == '0 && ky == '0;
  assign t_last = kx_last && ky_last;
  assign ox_last = oxb == OXW'(OXB - 1);
  assign oy_last = oy == OYW'(HO - 1);
  assign co_last = co == COW'(CO - 1);
  assign tap_col = pair_add(col_beat, col_tap);
  assign iy = iy_row + iy_tap;
  assign row_in_range = !iy[YW-1] && iy < Y_LIMIT;

  always_ff @(posedge clk) begin
    if (rst) begin
      kx <= '0;
      ky <= '0;
      oxb <= '0;
      oy <= '0;
      co <= '0;
      plane_row <= '0;
      plane_slot <= '0;
      top_slot <= STEP_TOP[SW-1:0];
      tap_slot <= STEP_TOP[SW-1:0];
      col_beat <= P_ORIGIN;
      col_tap <= '0;
      iy_row <= Y_START;
      iy_tap <= '0;
      ix_beat <= X_START;
      ix_tap <= '0;
      kernel_addr <= '0;
      kernel_base <= '0;
    end else if (issue) begin
      if (!t_last) kernel_addr <= kernel_addr + KAW'(1);
      if (!kx_last) begin
        kx <= kx + KXW'(1);
        ix_tap <= ix_tap + X_DIL;
        col_tap <= pair_add(col_tap, P_KX);
      end else begin
        kx <= '0;
        ix_tap <= '0;
        col_tap <= '0;
        if (!ky_last) begin
          ky <= ky + KYW'(1);
          iy_tap <= iy_tap + Y_DIL;
          tap_slot <= slot_add(tap_slot, STEP_TAP);
        end else begin
          // last tap of this output beat
          ky <= '0;
          iy_tap <= '0;
          tap_slot <= top_slot;
          kernel_addr <= kernel_base;
          if (!ox_last) begin
            oxb <= oxb + OXW'(1);
            ix_beat <= ix_beat + X_STEP;
            col_beat <= pair_add(col_beat, P_OX);
          end else begin
            oxb <= '0;
            ix_beat <= X_START;
            col_beat <= P_ORIGIN;
            if (!oy_last) begin
              oy <= oy + OYW'(1);
              iy_row <= iy_row + Y_STEP;
              top_slot <= slot_add(top_slot, STEP_ROW);
              tap_slot <= slot_add(top_slot, STEP_ROW);
            end else begin
              // the next plane: the next channel, or the next sample's first
              oy <= '0;
              iy_row <= Y_START;
              plane_row <= plane_row + 32'(H);
              plane_slot <= slot_add(plane_slot, STEP_PLANE);
              top_slot <= slot_add(slot_add(plane_slot, STEP_PLANE), STEP_TOP);
              tap_slot <= slot_add(slot_add(plane_slot, STEP_PLANE), STEP_TOP);
              co <= co_last ? '0 : co + COW'(1);
              kernel_base <= co_last ? '0 : kernel_base + KAW'(T);
              kernel_addr <= co_last ? '0 : kernel_base + KAW'(T);
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

  // Each lane owns a copy of the ring so that all PO window reads happen in the same cycle.
  for (genvar l = 0; l < PO; l++) begin : g_lane
    localparam logic [PRW-1:0] LANE_OFFSET = to_pair(l * STRIDE_X);
    localparam logic signed [XCW-1:0] LANE_IX = XCW'(l * STRIDE_X);
    logic [PI*XW-1:0] buffer [0:NW-1];
    logic [PRW-1:0] col;
    logic [MA-1:0] rd_addr;
    logic signed [XCW-1:0] ix;
    logic in_range;
    logic [PI*XW-1:0] rd_word;
    logic [RW-1:0] fold_lane_sel;
    logic fold_in_range;

    assign col = pair_add(tap_col, LANE_OFFSET);
    assign ix = ix_beat + ix_tap + LANE_IX;
    assign in_range = row_in_range && !ix[XCW-1] && ix < X_LIMIT;
    assign rd_addr = in_range ? MA'(tap_slot) * MA'(WW) + MA'(col[PRW-1:RW]) : '0;

    always_ff @(posedge clk) begin
      if (in_fire) buffer[wr_addr] <= data_in_0;
      if (issue) begin
        rd_word <= buffer[rd_addr];
        fold_lane_sel <= col[RW-1:0];
        fold_in_range <= in_range;
      end
    end

    assign tap_data[l*XW +: XW] = fold_in_range ? rd_word[fold_lane_sel*XW +: XW] : PAD_CODE;
  end

endmodule
)sv"sv};
}  // namespace mase::verilog::rtl
