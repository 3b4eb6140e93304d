#pragma once
// mase_sweep_stage: the fold stage and output register both window sweeps end in.
#include <string_view>

namespace mase::verilog::rtl {
inline constexpr std::string_view mase_sweep_stage = R"sv(// mase_sweep_stage: the end of a window sweep (mase_line_sweep, mase_sample_sweep). A tap issued
// in one cycle is folded in the next (fold, fold_first: the parent folds tap_data into its lanes'
// running values), and after a window's last tap the lanes' cast results enter the output
// register, the only place the pipeline stalls (stall holds the issue stage too).
module mase_sweep_stage #(
  parameter int RESULT_WIDTH = 8,
  parameter int OUT_LANES = 1
) (
  input  logic clk,
  input  logic rst,
  input  logic issue,
  input  logic issue_first,
  input  logic issue_last,
  output logic stall,
  output logic fold,
  output logic fold_first,
  input  logic [OUT_LANES*RESULT_WIDTH-1:0] result,
  output logic [OUT_LANES*RESULT_WIDTH-1:0] data_out_0,
  output logic data_out_0_valid,
  input  logic data_out_0_ready
);
  logic fold_valid, fold_last;

  always_ff @(posedge clk) begin
    if (rst) fold_valid <= 1'b0;
    else if (!stall) fold_valid <= issue;
    if (!stall) begin
      fold_first <= issue_first;
      fold_last <= issue_last;
    end
  end

  assign fold = fold_valid && !stall;
  assign stall = fold_valid && fold_last && data_out_0_valid && !data_out_0_ready;

  always_ff @(posedge clk) begin
    if (rst) data_out_0_valid <= 1'b0;
    else if (fold_valid && fold_last && !stall) data_out_0_valid <= 1'b1;
    else if (data_out_0_ready) data_out_0_valid <= 1'b0;
    if (fold_valid && fold_last && !stall) data_out_0 <= result;
  end
endmodule
)sv";
}  // namespace mase::verilog::rtl
