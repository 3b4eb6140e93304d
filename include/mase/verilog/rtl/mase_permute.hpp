#pragma once
// mase_permute: a stream's samples reordered (permute / transpose of the dimensions after the
// batch) or gathered (index_select by constant indices: the [CLS] token's row): each sample
// written in arrival order into one bank of a two-bank buffer, read out in the order a table
// gives, while the next sample fills the other bank.
#include <mase/verilog/module_interface.hpp>

namespace mase::verilog::rtl {
inline constexpr module_parameter mase_permute_parameters[] = {
    {"DATA_IN_0_PRECISION_0", "8"}, {"DATA_OUT_0_PARALLELISM_DIM_0", "1"}, {"SAMPLE_SIZE", "4"},
    {"OUT_SAMPLE_SIZE", "SAMPLE_SIZE"}, {"ORDER_MEMFILE", "\"\"", ""},
};
inline constexpr module_port mase_permute_ports[] = {
    {in, "clk"}, {in, "rst"},
    {in, "data_in_0", "DATA_IN_0_PRECISION_0", stream},
    {out, "data_out_0", "DATA_OUT_0_PARALLELISM_DIM_0*DATA_IN_0_PRECISION_0", stream},
};
inline constexpr module_text mase_permute{
    .name = "mase_permute", .parameters = mase_permute_parameters, .ports = mase_permute_ports,
    .description = R"sv(// Reorders each sample of SAMPLE_SIZE elements: the sample is written in arrival order, one
// element per beat, into one bank, then OUT_SAMPLE_SIZE elements are read out LANES per beat in
// the order of ORDER_MEMFILE (word b: the arrival positions of output elements b*LANES ..
// b*LANES+LANES-1, lane 0 lowest), while the next sample fills the other bank. A permutation
// reads every element once; a gather any of them any number of times.
)sv"sv,
    .body = R"sv(  localparam int W = DATA_IN_0_PRECISION_0;
  localparam int AW = SAMPLE_SIZE > 1 ? $clog2(SAMPLE_SIZE) : 1;
  localparam logic [AW-1:0] LAST = AW'(SAMPLE_SIZE - 1);
  localparam int LANES = DATA_OUT_0_PARALLELISM_DIM_0;
  localparam int BEATS = OUT_SAMPLE_SIZE / LANES;
  localparam int BW = BEATS > 1 ? $clog2(BEATS) : 1;
  localparam logic [BW-1:0] LAST_BEAT = BW'(BEATS - 1);

  initial if (OUT_SAMPLE_SIZE % LANES != 0) $fatal(1, "mase_permute: lanes must divide the sample");

  logic [LANES*AW-1:0] order[0:BEATS-1];
  // No file by default: yosys elaborates every module with its defaults when reading it.
  initial if (ORDER_MEMFILE != "") $readmemh(ORDER_MEMFILE, order);

  logic [W-1:0] banks[0:1][0:SAMPLE_SIZE-1];
  logic [1:0] bank_full;
  logic write_bank, read_bank;
  logic [AW-1:0] write_position;
  logic [BW-1:0] read_position;
  logic [LANES*AW-1:0] sources;
  logic in_fire, out_fire;

  assign data_in_0_ready = !bank_full[write_bank];
  assign in_fire = data_in_0_valid && data_in_0_ready;
  assign data_out_0_valid = bank_full[read_bank];
  assign out_fire = data_out_0_valid && data_out_0_ready;
  assign sources = order[read_position];
  for (genvar lane = 0; lane < LANES; lane++) begin : g_lane
    assign data_out_0[lane*W+:W] = banks[read_bank][sources[lane*AW+:AW]];
  end

  always_ff @(posedge clk) begin
    if (in_fire) banks[write_bank][write_position] <= data_in_0;
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      bank_full <= 2'b00;
      write_bank <= 1'b0;
      read_bank <= 1'b0;
      write_position <= '0;
      read_position <= '0;
    end else begin
      if (in_fire) begin
        write_position <= write_position == LAST ? '0 : write_position + 1'b1;
        if (write_position == LAST) begin
          bank_full[write_bank] <= 1'b1;
          write_bank <= !write_bank;
        end
      end
      if (out_fire) begin
        read_position <= read_position == LAST_BEAT ? '0 : read_position + 1'b1;
        if (read_position == LAST_BEAT) begin
          bank_full[read_bank] <= 1'b0;
          read_bank <= !read_bank;
        end
      end
    end
  end
endmodule
)sv"sv};
}  // namespace mase::verilog::rtl
