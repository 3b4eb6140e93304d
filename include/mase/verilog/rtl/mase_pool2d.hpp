#pragma once
// mase_pool2d: streaming 2-D max / average pooling with the same buffered window sweep as
// mase_conv2d; padding never wins a max and counts as zero in an average.
#include <string_view>

namespace mase::verilog::rtl {
inline constexpr std::string_view mase_pool2d = R"sv(// mase_pool2d: 2-D max (MODE 0) or average (MODE 1, count_include_pad, KX*KY a power of two)
// pooling over a stream of C x H x W samples. Same sweep as mase_conv2d: a whole sample is buffered
// (two banks), then each of the PO output lanes folds one window element per cycle.
module mase_pool2d #(
  parameter int MODE = 0,
  parameter int DATA_IN_0_PRECISION_0 = 8,
  parameter int DATA_IN_0_PRECISION_1 = 4,
  parameter int DATA_IN_0_TENSOR_SIZE_DIM_0 = 8,
  parameter int DATA_IN_0_TENSOR_SIZE_DIM_1 = 8,
  parameter int DATA_IN_0_TENSOR_SIZE_DIM_2 = 1,
  parameter int DATA_IN_0_PARALLELISM_DIM_0 = 1,
  parameter int DATA_OUT_0_PRECISION_0 = 8,
  parameter int DATA_OUT_0_PRECISION_1 = 4,
  parameter int DATA_OUT_0_TENSOR_SIZE_DIM_0 = 4,
  parameter int DATA_OUT_0_TENSOR_SIZE_DIM_1 = 4,
  parameter int DATA_OUT_0_TENSOR_SIZE_DIM_2 = 1,
  parameter int DATA_OUT_0_PARALLELISM_DIM_0 = 1,
  parameter int KERNEL_X = 2,
  parameter int KERNEL_Y = 2,
  parameter int STRIDE_X = 2,
  parameter int STRIDE_Y = 2,
  parameter int PADDING_X = 0,
  parameter int PADDING_Y = 0,
  parameter int DILATION_X = 1,
  parameter int DILATION_Y = 1,
  parameter int OUT_SYMMETRIC = 0
) (
  input  logic clk,
  input  logic rst,
  input  logic [DATA_IN_0_PARALLELISM_DIM_0*DATA_IN_0_PRECISION_0-1:0] data_in_0,
  input  logic data_in_0_valid,
  output logic data_in_0_ready,
  output logic [DATA_OUT_0_PARALLELISM_DIM_0*DATA_OUT_0_PRECISION_0-1:0] data_out_0,
  output logic data_out_0_valid,
  input  logic data_out_0_ready
);
  localparam int XW = DATA_IN_0_PRECISION_0;
  localparam int XF = DATA_IN_0_PRECISION_1;
  localparam int W = DATA_IN_0_TENSOR_SIZE_DIM_0;
  localparam int H = DATA_IN_0_TENSOR_SIZE_DIM_1;
  localparam int C = DATA_IN_0_TENSOR_SIZE_DIM_2;
  localparam int PI = DATA_IN_0_PARALLELISM_DIM_0;
  localparam int OW = DATA_OUT_0_PRECISION_0;
  localparam int OF = DATA_OUT_0_PRECISION_1;
  localparam int WO = DATA_OUT_0_TENSOR_SIZE_DIM_0;
  localparam int HO = DATA_OUT_0_TENSOR_SIZE_DIM_1;
  localparam int CO = DATA_OUT_0_TENSOR_SIZE_DIM_2;   // = C
  localparam int PO = DATA_OUT_0_PARALLELISM_DIM_0;
  localparam int KX = KERNEL_X;
  localparam int KY = KERNEL_Y;
  localparam int NW = C * H * W / PI;      // buffer words per sample (one word = one input beat)
  localparam int OXB = WO / PO;            // output beats per output row
  localparam int AREA_LOG2 = KX * KY > 1 ? $clog2(KX * KY) : 0;
  // max keeps an input code; average keeps the exact window sum (fraction XF, scaled by the area)
  localparam int VW = MODE == 0 ? XW : XW + AREA_LOG2;
  localparam int VF = MODE == 0 ? XF : XF + AREA_LOG2;

  localparam int QW = NW > 1 ? $clog2(NW) : 1;     // word index (kept modulo 2^QW)
  localparam int RW = PI > 1 ? $clog2(PI) : 1;     // lane within a word
  localparam int PRW = QW + RW;
  localparam int MA = QW + 1;                      // buffer address: two banks of NW words
  localparam int KXW = KX > 1 ? $clog2(KX) : 1;
  localparam int KYW = KY > 1 ? $clog2(KY) : 1;
  localparam int OXW = OXB > 1 ? $clog2(OXB) : 1;
  localparam int OYW = HO > 1 ? $clog2(HO) : 1;
  localparam int COW = CO > 1 ? $clog2(CO) : 1;
  // signed input coordinates, wide enough for every window position including padding
  localparam int YW = $clog2(HO * STRIDE_Y + KY * DILATION_Y + PADDING_Y + H + 1) + 1;
  localparam int XCW = $clog2(WO * STRIDE_X + KX * DILATION_X + PADDING_X + W + 1) + 1;

  // An element index e = q*PI + r is kept as the pair {q, r} (word, lane) and only ever moved by
  // constant steps, so no divider by PI is needed. q wraps modulo 2^QW; that is exact for every
  // in-range element (0 <= q < NW) and out-of-range elements are never used.
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

  localparam logic [PRW-1:0] P_ORIGIN = to_pair(-(PADDING_Y * W) - PADDING_X);  // window (0,0)
  localparam logic [PRW-1:0] P_KX = to_pair(DILATION_X);
  localparam logic [PRW-1:0] P_KY = to_pair(DILATION_Y * W);
  localparam logic [PRW-1:0] P_OX = to_pair(PO * STRIDE_X);
  localparam logic [PRW-1:0] P_OY = to_pair(STRIDE_Y * W);
  localparam logic [PRW-1:0] P_CHANNEL = to_pair(H * W);

  localparam logic signed [YW-1:0] Y_START = YW'(-PADDING_Y);
  localparam logic signed [YW-1:0] Y_STEP = YW'(STRIDE_Y);
  localparam logic signed [YW-1:0] Y_DIL = YW'(DILATION_Y);
  localparam logic signed [YW-1:0] Y_LIMIT = YW'(H);
  localparam logic signed [XCW-1:0] X_START = XCW'(-PADDING_X);
  localparam logic signed [XCW-1:0] X_STEP = XCW'(PO * STRIDE_X);
  localparam logic signed [XCW-1:0] X_DIL = XCW'(DILATION_X);
  localparam logic signed [XCW-1:0] X_LIMIT = XCW'(W);

  // ---------------- input side: fill banks in turn ----------------
  localparam logic [MA-1:0] BANK0_LAST = MA'(NW - 1);
  localparam logic [MA-1:0] BANK1_LAST = MA'(2 * NW - 1);
  logic [MA-1:0] wr_addr;
  logic wr_bank, rd_bank;
  logic [1:0] bank_full;
  logic in_fire, sample_done;

  assign data_in_0_ready = !bank_full[wr_bank];
  assign in_fire = data_in_0_valid && data_in_0_ready;

  // in_fire needs bank_full[wr_bank] == 0 and sample_done needs bank_full[rd_bank] == 1, so the two
  // updates below never touch the same bank.
  always_ff @(posedge clk) begin
    if (rst) begin
      wr_addr <= '0;
      wr_bank <= 1'b0;
      rd_bank <= 1'b0;
      bank_full <= 2'b00;
    end else begin
      if (in_fire) begin
        wr_addr <= (wr_addr == BANK1_LAST) ? '0 : wr_addr + MA'(1);
        if (wr_addr == BANK0_LAST || wr_addr == BANK1_LAST) begin
          bank_full[wr_bank] <= 1'b1;
          wr_bank <= !wr_bank;
        end
      end
      if (sample_done) begin
        bank_full[rd_bank] <= 1'b0;
        rd_bank <= !rd_bank;
      end
    end
  end

  // ---------------- issue stage: sweep c, oy, ox-beat, then ky, kx ----------------
  logic issue, stall;
  logic [KXW-1:0] kx;
  logic [KYW-1:0] ky;
  logic [OXW-1:0] oxb;
  logic [OYW-1:0] oy;
  logic [COW-1:0] co;
  logic kx_last, ky_last, t_first, t_last, ox_last, oy_last, co_last;
  logic [PRW-1:0] win, win_row, win_plane;      // window origin: this beat, this row, this channel
  logic [PRW-1:0] ker, ker_row;                 // kernel tap offset: this tap, this ky row
  logic [PRW-1:0] win_next, win_row_next, win_plane_next, ker_next, ker_row_next;
  logic [PRW-1:0] tap;
  logic signed [YW-1:0] iy_row, iy_tap, iy;
  logic signed [XCW-1:0] ix_beat, ix_tap;
  logic row_in_range;

  assign issue = bank_full[rd_bank] && !stall;
  assign kx_last = kx == KXW'(KX - 1);
  assign ky_last = ky == KYW'(KY - 1);
  assign t_first = kx == '0 && ky == '0;
  assign t_last = kx_last && ky_last;
  assign ox_last = oxb == OXW'(OXB - 1);
  assign oy_last = oy == OYW'(HO - 1);
  assign co_last = co == COW'(CO - 1);
  assign sample_done = issue && t_last && ox_last && oy_last && co_last;

  assign ker_next = pair_add(ker, P_KX);
  assign ker_row_next = pair_add(ker_row, P_KY);
  assign win_next = pair_add(win, P_OX);
  assign win_row_next = pair_add(win_row, P_OY);
  assign win_plane_next = pair_add(win_plane, P_CHANNEL);
  assign tap = pair_add(win, ker);
  assign iy = iy_row + iy_tap;
  assign row_in_range = !iy[YW-1] && iy < Y_LIMIT;

  always_ff @(posedge clk) begin
    if (rst) begin
      kx <= '0;
      ky <= '0;
      oxb <= '0;
      oy <= '0;
      co <= '0;
      ker <= '0;
      ker_row <= '0;
      win <= P_ORIGIN;
      win_row <= P_ORIGIN;
      win_plane <= P_ORIGIN;
      iy_row <= Y_START;
      iy_tap <= '0;
      ix_beat <= X_START;
      ix_tap <= '0;
    end else if (issue) begin
      if (!kx_last) begin
        kx <= kx + KXW'(1);
        ix_tap <= ix_tap + X_DIL;
        ker <= ker_next;
      end else begin
        kx <= '0;
        ix_tap <= '0;
        if (!ky_last) begin
          ky <= ky + KYW'(1);
          iy_tap <= iy_tap + Y_DIL;
          ker <= ker_row_next;
          ker_row <= ker_row_next;
        end else begin
          // last tap of this output beat: move to the next beat
          ky <= '0;
          iy_tap <= '0;
          ker <= '0;
          ker_row <= '0;
          if (!ox_last) begin
            oxb <= oxb + OXW'(1);
            ix_beat <= ix_beat + X_STEP;
            win <= win_next;
          end else begin
            oxb <= '0;
            ix_beat <= X_START;
            if (!oy_last) begin
              oy <= oy + OYW'(1);
              iy_row <= iy_row + Y_STEP;
              win <= win_row_next;
              win_row <= win_row_next;
            end else begin
              oy <= '0;
              iy_row <= Y_START;
              if (!co_last) begin
                co <= co + COW'(1);
                win <= win_plane_next;
                win_row <= win_plane_next;
                win_plane <= win_plane_next;
              end else begin
                co <= '0;
                win <= P_ORIGIN;
                win_row <= P_ORIGIN;
                win_plane <= P_ORIGIN;
              end
            end
          end
        end
      end
    end
  end

  // ---------------- fold stage ----------------
  logic fold_valid, fold_first, fold_last;
  logic [PO*VW-1:0] value_next_lanes;
  logic [PO*OW-1:0] cast_out;

  always_ff @(posedge clk) begin
    if (rst) fold_valid <= 1'b0;
    else if (!stall) fold_valid <= issue;
    if (!stall) begin
      fold_first <= t_first;
      fold_last <= t_last;
    end
  end

  // Each lane owns a copy of the buffer so that all PO window reads happen in the same cycle.
  for (genvar l = 0; l < PO; l++) begin : g_lane
    localparam logic [PRW-1:0] LANE_OFFSET = to_pair(l * STRIDE_X);
    localparam logic signed [XCW-1:0] LANE_IX = XCW'(l * STRIDE_X);
    logic [PI*XW-1:0] buffer [0:2*NW-1];
    logic [PRW-1:0] elem;
    logic [MA-1:0] rd_addr;
    logic signed [XCW-1:0] ix;
    logic in_range;
    logic [PI*XW-1:0] rd_word;
    logic [RW-1:0] fold_lane_sel;
    logic fold_in_range;
    logic signed [VW-1:0] x, value, value_next;

    assign elem = pair_add(tap, LANE_OFFSET);
    assign rd_addr = MA'(elem[PRW-1:RW]) + (rd_bank ? MA'(NW) : MA'(0));
    assign ix = ix_beat + ix_tap + LANE_IX;
    assign in_range = row_in_range && !ix[XCW-1] && ix < X_LIMIT;

    always_ff @(posedge clk) begin
      if (in_fire) buffer[wr_addr] <= data_in_0;
      if (issue) begin
        rd_word <= buffer[rd_addr];
        fold_lane_sel <= elem[RW-1:0];
        fold_in_range <= in_range;
      end
    end

    assign x = VW'($signed(rd_word[fold_lane_sel*XW +: XW]));

    if (MODE == 0) begin : g_max
      // padding never wins: out-of-range taps leave the running maximum untouched
      localparam logic signed [VW-1:0] LOWEST = {1'b1, (VW - 1)'(0)};
      logic signed [VW-1:0] running;
      assign running = fold_first ? LOWEST : value;
      assign value_next = (fold_in_range && x > running) ? x : running;
    end else begin : g_average
      // padded taps count as zero (count_include_pad); the sum cannot overflow VW bits
      assign value_next = (fold_first ? VW'(0) : value) + (fold_in_range ? x : VW'(0));
    end
    assign value_next_lanes[l*VW +: VW] = value_next;

    always_ff @(posedge clk) begin
      if (fold_valid && !stall) value <= value_next;
    end
  end

  mase_cast #(
    .IN_WIDTH(VW), .IN_FRAC(VF), .OUT_WIDTH(OW), .OUT_FRAC(OF),
    .SYMMETRIC(OUT_SYMMETRIC), .LANES(PO)
  ) out_cast (
    .data_in(value_next_lanes), .data_out(cast_out)
  );

  // ---------------- output register: the only place the pipeline can stall ----------------
  assign stall = fold_valid && fold_last && data_out_0_valid && !data_out_0_ready;

  always_ff @(posedge clk) begin
    if (rst) data_out_0_valid <= 1'b0;
    else if (fold_valid && fold_last && !stall) data_out_0_valid <= 1'b1;
    else if (data_out_0_ready) data_out_0_valid <= 1'b0;
    if (fold_valid && fold_last && !stall) data_out_0 <= cast_out;
  end
endmodule
)sv";
}  // namespace mase::verilog::rtl
