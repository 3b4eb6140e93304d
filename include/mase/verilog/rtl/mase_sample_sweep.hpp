#pragma once
// mase_sample_sweep: the window sweep over whole buffered samples (two-bank sample buffer,
// window/tap counters, per-lane reads, output register), for convolutions whose output channels
// read several input channels; mase_window_sweep picks it or mase_line_sweep.
#include <mase/verilog/module_interface.hpp>
#include <mase/verilog/rtl/mase_sweep_stage.hpp>

namespace mase::verilog::rtl {
inline constexpr module_text mase_sample_sweep{
    .name = "mase_sample_sweep", .shared_parameters = sweep_geometry_parameters, .parameters = sweep_channel_parameters, .ports = sweep_ports,
    .description = R"sv(// mase_sample_sweep: the window sweep over whole buffered samples (see mase_window_sweep).
// A whole sample (IN_CHANNELS x IN_ROWS x IN_COLS, row-major, IN_LANES elements per beat) is stored in
// two banks, so the next sample loads while this one is swept. The OUT_CHANNELS x OUT_ROWS x OUT_COLS
// windows are visited row-major, OUT_LANES consecutive output columns per beat, one kernel tap
// (ci, ky, kx innermost) per cycle: T = (IN_CHANNELS/GROUPS)*KERNEL_Y*KERNEL_X cycles per beat.
// Output channel co reads input channels (co / (OUT_CHANNELS/GROUPS)) * (IN_CHANNELS/GROUPS) + ci.
// Two stages: issue (buffer read; the parent's ROMs read at the same edge), then fold, where the
// parent combines each lane's tap_data into its running value and hands back the cast results of a
// window, which the output register takes after the window's last tap. That register is the only
// place the pipeline stalls.
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
  localparam int CG = C / GROUPS;          // input channels seen by one output channel
  localparam int COG = CO / GROUPS;        // output channels per group
  localparam int T = CG * KY * KX;         // taps (cycles) per output beat
  localparam int NW = C * H * W / PI;      // buffer words per sample (one word = one input beat)
  localparam int OXB = WO / PO;            // output beats per output row
  localparam int KDEPTH = CO * T;

  localparam int QW = NW > 1 ? $clog2(NW) : 1;     // word index (kept modulo 2^QW)
  localparam int RW = PI > 1 ? $clog2(PI) : 1;     // lane within a word
  localparam int PRW = QW + RW;
  localparam int MA = QW + 1;                      // buffer address: two banks of NW words
  localparam int KAW = KDEPTH > 1 ? $clog2(KDEPTH) : 1;
  localparam int KXW = KX > 1 ? $clog2(KX) : 1;
  localparam int KYW = KY > 1 ? $clog2(KY) : 1;
  localparam int CIW = CG > 1 ? $clog2(CG) : 1;
  localparam int OXW = OXB > 1 ? $clog2(OXB) : 1;
  localparam int OYW = HO > 1 ? $clog2(HO) : 1;
  localparam int COW = CO > 1 ? $clog2(CO) : 1;
  localparam int CGW = COG > 1 ? $clog2(COG) : 1;
  // signed input coordinates, wide enough for every window position including padding
  localparam int YW = $clog2(HO * STRIDE_Y + KY * DILATION_Y + PADDING_Y + H + 1) + 1;
  localparam int XCW = $clog2(WO * STRIDE_X + KX * DILATION_X + PADDING_X + W + 1) + 1;
  localparam logic [XW-1:0] PAD_CODE = PAD_MIN_CODE != 0 ? {1'b1, (XW - 1)'(0)} : '0;

  // An element index e = q*PI + r is kept as the pair {q, r} (word, lane) and only ever moved by
  // constant steps, so no divider by PI is needed. q wraps modulo 2^QW; that is exact for every
  // in-range element (0 <= q < NW) and out-of-range elements read PAD_CODE instead.
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
  localparam logic [PRW-1:0] P_CI = to_pair(H * W);
  localparam logic [PRW-1:0] P_OX = to_pair(PO * STRIDE_X);
  localparam logic [PRW-1:0] P_OY = to_pair(STRIDE_Y * W);
  localparam logic [PRW-1:0] P_GROUP = to_pair(CG * H * W);

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

  // ---------------- issue stage: sweep co, oy, ox-beat, then ci, ky, kx ----------------
  logic stall;
  logic [KXW-1:0] kx;
  logic [KYW-1:0] ky;
  logic [CIW-1:0] ci;
  logic [OXW-1:0] oxb;
  logic [OYW-1:0] oy;
  logic [COW-1:0] co;
  logic [CGW-1:0] co_in_group;
  logic kx_last, ky_last, ci_last, t_first, t_last, ox_last, oy_last, co_last, group_last;
  logic [PRW-1:0] win, win_row, win_plane;      // window origin: this beat, this row, this group
  logic [PRW-1:0] ker, ker_row, ker_plane;      // kernel tap offset: this tap, this ky row, this ci
  logic [PRW-1:0] win_next, win_row_next, win_plane_next, ker_next, ker_row_next, ker_plane_next;
  logic [PRW-1:0] tap;
  logic signed [YW-1:0] iy_row, iy_tap, iy;
  logic signed [XCW-1:0] ix_beat, ix_tap;
  logic row_in_range;
  logic [KAW-1:0] kernel_base;                  // kernel_addr of this output channel's first tap

  assign issue = bank_full[rd_bank] && !stall;
  assign out_channel = co;
  assign kx_last = kx == KXW'(KX - 1);
  assign ky_last = ky == KYW'(KY - 1);
  assign ci_last = ci == CIW'(CG - 1);
  assign t_first = kx == '0 && ky == '0 && ci == '0;
  assign t_last = kx_last && ky_last && ci_last;
  assign ox_last = oxb == OXW'(OXB - 1);
  assign oy_last = oy == OYW'(HO - 1);
  assign co_last = co == COW'(CO - 1);
  assign group_last = co_in_group == CGW'(COG - 1);
  assign sample_done = issue && t_last && ox_last && oy_last && co_last;

  assign ker_next = pair_add(ker, P_KX);
  assign ker_row_next = pair_add(ker_row, P_KY);
  assign ker_plane_next = pair_add(ker_plane, P_CI);
  assign win_next = pair_add(win, P_OX);
  assign win_row_next = pair_add(win_row, P_OY);
  assign win_plane_next = pair_add(win_plane, P_GROUP);
  assign tap = pair_add(win, ker);
  assign iy = iy_row + iy_tap;
  assign row_in_range = !iy[YW-1] && iy < Y_LIMIT;

  always_ff @(posedge clk) begin
    if (rst) begin
      kx <= '0;
      ky <= '0;
      ci <= '0;
      oxb <= '0;
      oy <= '0;
      co <= '0;
      co_in_group <= '0;
      ker <= '0;
      ker_row <= '0;
      ker_plane <= '0;
      win <= P_ORIGIN;
      win_row <= P_ORIGIN;
      win_plane <= P_ORIGIN;
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
          ky <= '0;
          iy_tap <= '0;
          if (!ci_last) begin
            ci <= ci + CIW'(1);
            ker <= ker_plane_next;
            ker_row <= ker_plane_next;
            ker_plane <= ker_plane_next;
          end else begin
            // last tap of this output beat: move to the next beat
            ci <= '0;
            ker <= '0;
            ker_row <= '0;
            ker_plane <= '0;
            if (!ox_last) begin
              oxb <= oxb + OXW'(1);
              ix_beat <= ix_beat + X_STEP;
              win <= win_next;
              kernel_addr <= kernel_base;
            end else begin
              oxb <= '0;
              ix_beat <= X_START;
              if (!oy_last) begin
                oy <= oy + OYW'(1);
                iy_row <= iy_row + Y_STEP;
                win <= win_row_next;
                win_row <= win_row_next;
                kernel_addr <= kernel_base;
              end else begin
                oy <= '0;
                iy_row <= Y_START;
                if (!co_last) begin
                  co <= co + COW'(1);
                  kernel_base <= kernel_base + KAW'(T);
                  kernel_addr <= kernel_base + KAW'(T);
                  if (group_last) begin
                    co_in_group <= '0;
                    win <= win_plane_next;
                    win_row <= win_plane_next;
                    win_plane <= win_plane_next;
                  end else begin
                    co_in_group <= co_in_group + CGW'(1);
                    win <= win_plane;
                    win_row <= win_plane;
                  end
                end else begin
                  co <= '0;
                  co_in_group <= '0;
                  kernel_base <= '0;
                  kernel_addr <= '0;
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
  end

  // ---------------- fold stage and output register ----------------
  mase_sweep_stage #(.RESULT_WIDTH(RESULT_WIDTH), .OUT_LANES(PO)) stage (
    .clk(clk), .rst(rst), .issue(issue), .issue_first(t_first), .issue_last(t_last), .stall(stall),
    .fold(fold), .fold_first(fold_first), .result(result),
    .data_out_0(data_out_0), .data_out_0_valid(data_out_0_valid), .data_out_0_ready(data_out_0_ready)
  );

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

    assign tap_data[l*XW +: XW] = fold_in_range ? rd_word[fold_lane_sel*XW +: XW] : PAD_CODE;
  end

endmodule
)sv"sv};
}  // namespace mase::verilog::rtl
