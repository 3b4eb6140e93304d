#pragma once
// mase_sweep_stage: the fold stage and output register both window sweeps end in.
#include <mase/verilog/module_interface.hpp>

#include <array>
#include <string_view>

namespace mase::verilog::rtl {
// The window sweeps' shared interface (mase_window_sweep and the three it picks from): the
// element and result widths, the map's and the windows' geometry, and the issue and fold stages'
// ports through which the parent (a conv or a pool) reads its ROMs and folds each tap.
inline constexpr module_parameter sweep_geometry_parameters[] = {
    {"ELEMENT_WIDTH", "8"}, {"RESULT_WIDTH", "8"}, {"IN_COLS", "8"}, {"IN_ROWS", "8"}, {"IN_LANES", "1"},
    {"OUT_COLS", "8"}, {"OUT_ROWS", "8"}, {"OUT_CHANNELS", "1"}, {"OUT_LANES", "1"}, {"KERNEL_X", "3"},
    {"KERNEL_Y", "3"}, {"STRIDE_X", "1"}, {"STRIDE_Y", "1"}, {"PADDING_X", "1"}, {"PADDING_Y", "1"},
    {"DILATION_X", "1"}, {"DILATION_Y", "1"},
    {"PAD_MIN_CODE", "0", "int", "what a tap outside the map reads: 0, or (1) the most negative code, which never wins a max"},
};
// A sweep whose output channels read IN_CHANNELS / GROUPS input channels each.
inline constexpr module_parameter sweep_channel_parameters[] = {{"IN_CHANNELS", "1"}, {"GROUPS", "1"}};
// Its ports, given the kernel address's width: it counts OUT_CHANNELS * T taps, T a window's.
constexpr std::array<module_port, 11> sweep_ports_addressing(std::string_view kernel_addr_width) {
  return {{{in, "clk"},
           {in, "rst"},
           {in, "data_in_0", "IN_LANES*ELEMENT_WIDTH", stream},
           {out, "issue", {}, false, false,
            "issue stage: a tap is issued this cycle, for output channel out_channel; kernel_addr is the\n"
            "tap's place in PyTorch's weight layout, out_channel*T + (ci*KERNEL_Y + ky)*KERNEL_X + kx"},
           {out, "out_channel", "(OUT_CHANNELS > 1 ? $clog2(OUT_CHANNELS) : 1)"},
           {out, "kernel_addr", kernel_addr_width},
           {out, "fold", {}, false, false,
            "fold stage: fold this cycle's tap_data (lane l: the element under lane l's tap) into the lanes'\n"
            "running values, restarting them where fold_first; result is the lanes' cast values including it"},
           {out, "fold_first"},
           {out, "tap_data", "OUT_LANES*ELEMENT_WIDTH"},
           {in, "result", "OUT_LANES*RESULT_WIDTH"},
           {out, "data_out_0", "OUT_LANES*RESULT_WIDTH", stream}}};
}
inline constexpr auto sweep_ports = sweep_ports_addressing(
    "(OUT_CHANNELS * (IN_CHANNELS / GROUPS) * KERNEL_Y * KERNEL_X > 1 ? "
    "$clog2(OUT_CHANNELS * (IN_CHANNELS / GROUPS) * KERNEL_Y * KERNEL_X) : 1)");
// A line sweep's windows read one channel each.
inline constexpr auto line_sweep_ports =
    sweep_ports_addressing("(OUT_CHANNELS * KERNEL_Y * KERNEL_X > 1 ? $clog2(OUT_CHANNELS * KERNEL_Y * KERNEL_X) : 1)");
inline constexpr module_parameter mase_sweep_stage_parameters[] = {
    {"RESULT_WIDTH", "8"}, {"OUT_LANES", "1"},
};
inline constexpr module_port mase_sweep_stage_ports[] = {
    {in, "clk"}, {in, "rst"},
    {in, "issue"}, {in, "issue_first"}, {in, "issue_last"},
    {out, "stall"}, {out, "fold"}, {out, "fold_first"},
    {in, "result", "OUT_LANES*RESULT_WIDTH"},
    {out, "data_out_0", "OUT_LANES*RESULT_WIDTH", stream},
};
inline constexpr module_text mase_sweep_stage{
    .name = "mase_sweep_stage", .parameters = mase_sweep_stage_parameters, .ports = mase_sweep_stage_ports,
    .description = R"sv(// mase_sweep_stage: the end of a window sweep (mase_line_sweep, mase_sample_sweep). A tap issued
// in one cycle is folded in the next (fold, fold_first: the parent folds tap_data into its lanes'
// running values), and after a window's last tap the lanes' cast results enter the output
// register, the only place the pipeline stalls (stall holds the issue stage too).
)sv"sv,
    .body = R"sv(  logic fold_valid, fold_last;

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
)sv"sv};
}  // namespace mase::verilog::rtl
