#pragma once
// The self-checking testbench emit_verilog writes (tb/tb.sv) and its Verilator main.
//
// Each input stream replays the bit-exact evaluator's input words; each output stream is
// compared, word by word and lane by lane, with the evaluator's results. Both sides stall at
// random (a xorshift generator per stream, so Icarus and Verilator see the same pattern):
// `+stall=N` makes each side idle N percent of the cycles (default 30; 0 measures throughput).
// The last lines printed are
//   N passed, M failed, C cycles
//   steady state: S cycles for the last K samples
// (S: from the first sample's last output word on data_out_0 to the last sample's).

#include <mase/verilog/design.hpp>

#include <algorithm>
#include <cstdint>
#include <string>

#include <fmt/core.h>

namespace mase::verilog::detail {

inline std::string testbench_text(const design& d) {
  std::string decl, logic, finished = "1'b1", passed = "0", failed = "0", remaining = "0";
  const std::int64_t samples = d.testbench.samples, timeout = d.testbench.timeout_cycles;
  std::int64_t max_word_bits = 1;
  for (const port_data& p : d.outputs) max_word_bits = std::max(max_word_bits, p.port.lanes * p.port.format.width);
  std::uint32_t seed = d.testbench.seed * 2654435761u + 12345u;
  const auto next_seed = [&] {
    seed = seed * 1664525u + 1013904223u;
    return seed == 0 ? 1u : seed;
  };

  for (const port_data& data : d.inputs) {
    const stream_port& p = data.port;
    const std::string s = p.name;
    const std::int64_t bits = p.lanes * p.format.width;
    decl += fmt::format("  logic [{}:0] {}_data;\n  logic {}_valid, {}_ready;\n", bits - 1, s, s, s);
    logic += fmt::format(
        "  // {0}: the evaluator's input words for graph input {1}\n"
        "  localparam int {0}_BEATS = {2};\n"
        "  logic [{3}:0] {0}_words [0:{0}_BEATS-1];\n"
        "  int {0}_index;\n"
        "  logic [31:0] {0}_random;\n"
        "  initial $readmemh(\"tb/{0}.hex\", {0}_words);\n"
        "  assign {0}_data = {0}_words[{0}_index < {0}_BEATS ? {0}_index : 0];\n"
        "  always @(posedge clk) begin\n"
        "    if (rst) begin\n"
        "      {0}_index <= 0;\n"
        "      {0}_valid <= 1'b0;\n"
        "      {0}_random <= 32'd{4};\n"
        "    end else begin\n"
        "      {0}_random <= next_random({0}_random);\n"
        "      if ({0}_valid && {0}_ready) {0}_index <= {0}_index + 1;\n"
        "      if (!{0}_valid || {0}_ready)\n"
        "        {0}_valid <= ({0}_index + (({0}_valid && {0}_ready) ? 1 : 0) < {0}_BEATS) &&\n"
        "                      ({0}_random % 100 >= stall_percent);\n"
        "    end\n"
        "  end\n\n",
        s, p.node, p.beats, bits - 1, next_seed());
  }
  for (const port_data& data : d.outputs) {
    const stream_port& p = data.port;
    const std::string s = p.name;
    const std::int64_t bits = p.lanes * p.format.width;
    const std::int64_t per_sample_beats = std::max<std::int64_t>(p.beats / std::max<std::int64_t>(samples, 1), 1);
    decl += fmt::format("  logic [{}:0] {}_data;\n  logic {}_valid, {}_ready;\n", bits - 1, s, s, s);
    logic += fmt::format(
        "  // {0}: compared with the evaluator's result of {1}\n"
        "  localparam int {0}_BEATS = {2};\n"
        "  localparam int {0}_LANES = {3};\n"
        "  localparam int {0}_WIDTH = {4};\n"
        "  localparam int {0}_BEATS_PER_SAMPLE = {5};\n"
        "  logic [{6}:0] {0}_words [0:{0}_BEATS-1];\n"
        "  int {0}_index, {0}_passed, {0}_failed, {0}_first_sample_done, {0}_last_sample_done, {0}_matches;\n"
        "  logic [{6}:0] {0}_expected;\n"
        "  assign {0}_expected = {0}_words[{0}_index < {0}_BEATS ? {0}_index : 0];\n"
        "  assign {0}_matches = matching_lanes({0}_data, {0}_expected, {0}_LANES, {0}_WIDTH);\n"
        "  logic [31:0] {0}_random;\n"
        "  initial $readmemh(\"tb/{0}.hex\", {0}_words);\n"
        "  always @(posedge clk) begin\n"
        "    if (rst) begin\n"
        "      {0}_index <= 0;\n"
        "      {0}_passed <= 0;\n"
        "      {0}_failed <= 0;\n"
        "      {0}_first_sample_done <= -1;\n"
        "      {0}_last_sample_done <= -1;\n"
        "      {0}_ready <= 1'b0;\n"
        "      {0}_random <= 32'd{7};\n"
        "    end else begin\n"
        "      {0}_random <= next_random({0}_random);\n"
        "      {0}_ready <= {0}_random % 100 >= stall_percent;\n"
        "      if ({0}_valid && {0}_ready) begin\n"
        "        if ({0}_index >= {0}_BEATS) begin\n"
        "          $display(\"{0}: an extra word %h after the expected %0d\", {0}_data, {0}_BEATS);\n"
        "          {0}_failed <= {0}_failed + {0}_LANES;\n"
        "        end else begin\n"
        "          {0}_passed <= {0}_passed + {0}_matches;\n"
        "          {0}_failed <= {0}_failed + {0}_LANES - {0}_matches;\n"
        "          if ({0}_matches != {0}_LANES && {0}_failed < 10)\n"
        "            $display(\"{0} word %0d: got %h, expected %h\", {0}_index, {0}_data, {0}_expected);\n"
        "          if (({0}_index + 1) % {0}_BEATS_PER_SAMPLE == 0) begin\n"
        "            if ({0}_first_sample_done < 0) {0}_first_sample_done <= cycle;\n"
        "            {0}_last_sample_done <= cycle;\n"
        "          end\n"
        "        end\n"
        "        {0}_index <= {0}_index + 1;\n"
        "      end\n"
        "    end\n"
        "  end\n\n",
        s, p.node, p.beats, p.lanes, p.format.width, per_sample_beats, bits - 1, next_seed());
    finished += fmt::format(" && {}_index >= {}_BEATS", s, s);
    passed += fmt::format(" + {}_passed", s);
    failed += fmt::format(" + {}_failed", s);
    remaining += fmt::format(" + ({0}_index < {0}_BEATS ? ({0}_BEATS - {0}_index) * {0}_LANES : 0)", s);
  }
  const std::string first = d.outputs.front().port.name;
  std::string connections = "    .clk(clk),\n    .rst(rst)", core_connections = connections;
  std::string adapters;
  for (const auto* list : {&d.inputs, &d.outputs}) {
    const bool input = list == &d.inputs;
    for (const port_data& data : *list) {
      const stream_port& p = data.port;
      // A net: Icarus 11 leaves a variable connected to an unpacked-array output port undriven.
      adapters += fmt::format("  wire [{}:0] {}_lanes [{}:0];\n", p.format.width - 1, p.name, p.lanes - 1);
      adapters += fmt::format("  for (genvar l = 0; l < {}; l++) begin : g_{}\n", p.lanes, p.name);
      if (input)
        adapters += fmt::format("    assign {0}_lanes[l] = {0}_data[l*{1} +: {1}];\n", p.name, p.format.width);
      else
        adapters += fmt::format("    assign {0}_data[l*{1} +: {1}] = {0}_lanes[l];\n", p.name, p.format.width);
      adapters += "  end\n";
      connections += fmt::format(",\n    .{0}({0}_lanes),\n    .{0}_valid({0}_valid),\n    .{0}_ready({0}_ready)", p.name);
      core_connections +=
          fmt::format(",\n    .{0}({0}_data),\n    .{0}_valid({0}_valid),\n    .{0}_ready({0}_ready)", p.name);
    }
  }

  return fmt::format(
      "// Generated by mase: replays the bit-exact evaluator's inputs into the design under random\n"
      "// valid/ready stalls and compares every output word with the evaluator's results.\n"
      "// +stall=N: each side idles N percent of the cycles (default 30).\n"
      
      "module tb\n"
      "`ifdef VERILATOR\n"
      "  (input logic clk)\n"
      "`endif\n"
      ";\n"
      "`ifndef VERILATOR\n"
      "  logic clk = 1'b0;\n"
      "  always #5 clk = ~clk;\n"
      "`endif\n\n"
      "  localparam int TIMEOUT_CYCLES = {0};\n"
      "  int stall_percent;\n"
      "  int cycle = 0;\n"
      "  logic rst;\n"
      "  assign rst = cycle < 4;\n"
      "  always @(posedge clk) cycle <= cycle + 1;\n"
      "  initial if (!$value$plusargs(\"stall=%d\", stall_percent)) stall_percent = 30;\n\n"
      "  function automatic logic [31:0] next_random(input logic [31:0] state);\n"
      "    logic [31:0] x;\n"
      "    x = state;\n"
      "    x = x ^ (x << 13);\n"
      "    x = x ^ (x >> 17);\n"
      "    x = x ^ (x << 5);\n"
      "    return x;\n"
      "  endfunction\n\n"
      "  // Lanes of `got` equal to `expected`.\n"
      "  function automatic int matching_lanes(input logic [{1}:0] got, input logic [{1}:0] expected, input int lanes,\n"
      "                                        input int width);\n"
      "    int count, l, b;\n"
      "    logic same;\n"
      "    count = 0;\n"
      "    for (l = 0; l < lanes; l = l + 1) begin\n"
      "      same = 1'b1;\n"
      "      for (b = 0; b < width; b = b + 1) if (got[l*width + b] !== expected[l*width + b]) same = 1'b0;\n"
      "      if (same) count = count + 1;\n"
      "    end\n"
      "    return count;\n"
      "  endfunction\n\n"
      "{2}\n{3}"
      "`ifdef VERILATOR\n"
      "{4}\n"
      "  top dut (\n{5}\n  );\n"
      "`else\n"
      "  // Icarus 11 cannot connect one-element unpacked-array ports: drive top_core, the same\n"
      "  // design without top's per-lane arrays.\n"
      "  top_core dut (\n{12}\n  );\n"
      "`endif\n\n"
      "  always @(posedge clk) begin\n"
      "    if (!rst && ({6})) begin\n"
      "      $display(\"%0d passed, %0d failed, %0d cycles\", {7}, {8}, cycle - 4);\n"
      "      $display(\"steady state: %0d cycles for the last %0d samples\", {9}_last_sample_done - {9}_first_sample_done, {10});\n"
      "      $finish;\n"
      "    end else if (cycle > TIMEOUT_CYCLES) begin\n"
      "      $display(\"timeout: the design stopped producing outputs after %0d cycles\", cycle);\n"
      "      $display(\"%0d passed, %0d failed, %0d cycles\", {7}, {8} + {11}, cycle - 4);\n"
      "      $finish;\n"
      "    end\n"
      "  end\n\n"
      "endmodule\n",
      timeout, max_word_bits - 1, decl, logic, adapters, connections, finished, passed, failed, first,
      std::max<std::int64_t>(samples, 1) - 1, remaining, core_connections);
}

inline std::string verilator_main_text() {
  return "// Generated by mase: the Verilator main that clocks tb/tb.sv until it calls $finish.\n"
         "#include <memory>\n\n"
         "#include \"Vtb.h\"\n"
         "#include \"verilated.h\"\n\n"
         "int main(int argc, char** argv) {\n"
         "  const auto context = std::make_unique<VerilatedContext>();\n"
         "  context->commandArgs(argc, argv);\n"
         "  const auto tb = std::make_unique<Vtb>(context.get());\n"
         "  tb->clk = 0;\n"
         "  while (!context->gotFinish()) {\n"
         "    tb->clk = !tb->clk;\n"
         "    tb->eval();\n"
         "    context->timeInc(5);\n"
         "  }\n"
         "  tb->final();\n"
         "  return 0;\n"
         "}\n";
}

}  // namespace mase::verilog::detail
