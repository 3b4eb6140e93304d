#pragma once
// The printers of a design (verilog/design.hpp): top_core.sv, top.sv, the ROM images and the
// testbench's data; the testbench itself is in verilog/testbench.hpp. Each reads the design
// alone: what to instantiate, with which parameters and depths, was decided by plan_design.
// Inline in the header-only mode, compiled once in mase::mase (src/verilog.cpp) otherwise.

#include <mase/verilog/design.hpp>
#include <mase/verilog/emit.hpp>
#include <mase/verilog/hex.hpp>
#include <mase/verilog/testbench.hpp>

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include <fmt/core.h>

namespace mase::verilog {

namespace detail {

// ROM words for $readmemh: `lanes_per_word` codes of `width` bits a line.
inline std::string hex_words(std::span<const std::int64_t> codes, std::int64_t lanes_per_word, int width) {
  std::string text;
  text.reserve(codes.size() * static_cast<std::size_t>(width + 3) / 4 + codes.size());
  for (std::size_t at = 0; at < codes.size(); at += static_cast<std::size_t>(lanes_per_word))
    append_hex_word(text, codes.subspan(at, static_cast<std::size_t>(lanes_per_word)), width);
  return text;
}

inline std::string net_text(const stream_net& net) {
  return fmt::format("  logic [{}:0] {};\n  logic {}_valid, {}_ready;\n", net.type.bits() - 1, net.name, net.name,
                     net.name);
}

// A parameter's value as a Verilog literal.
inline std::string verilog_literal(const parameter_value& v) {
  if (const bool* b = std::get_if<bool>(&v)) return *b ? "1" : "0";
  if (const std::int64_t* i = std::get_if<std::int64_t>(&v)) return fmt::format("{}", *i);
  if (const std::string* s = std::get_if<std::string>(&v)) return fmt::format("\"{}\"", *s);
  if (const project_path* f = std::get_if<project_path>(&v)) return fmt::format("\"{}\"", f->path);
  if (const sized_constant* c = std::get_if<sized_constant>(&v)) return fmt::format("{}'d{}", c->width, c->value);
  const auto& list = std::get<std::vector<std::int64_t>>(v);
  std::string text = "'{";
  for (std::size_t i = 0; i < list.size(); ++i) text += fmt::format("{}{}", i ? ", " : "", list[i]);
  return text + "}";
}

inline std::string instance_text(const instance& c) {
  std::string locals, parameters, wires, ports;
  for (const parameter_binding& p : c.parameters) {
    std::string value = verilog_literal(p.value);
    if (p.named_at_top_level()) {
      locals += fmt::format("  localparam {}_{} = {};\n", c.name, p.name, value);
      value = fmt::format("{}_{}", c.name, p.name);
    }
    parameters += fmt::format("{}    .{}({})", parameters.empty() ? "" : ",\n", p.name, value);
  }
  for (const port_binding& p : c.ports) ports += fmt::format("{}    .{}({})", ports.empty() ? "" : ",\n", p.port, p.signal);
  for (const std::string& ready : c.constant_operand_ready)
    wires += fmt::format("  /* verilator lint_off UNUSEDSIGNAL */\n  logic {}_ready;  // a constant operand: not a "
                         "stream\n  /* verilator lint_on UNUSEDSIGNAL */\n",
                         ready);
  for (const stream_net& net : c.nets) wires += net_text(net);
  return fmt::format("  // {} ({})\n{}{}  {} #(\n{}\n  ) {}_inst (\n{}\n  );\n\n", c.name, c.op, locals, wires, c.module,
                     parameters, c.name, ports);
}

// One reader's edge from the stream `data` (with its _valid and _ready): its lane converter, then
// its cast or a plain assignment.
inline std::string edge_text(const std::string& data, const stream_type& type, const edge& e) {
  std::string text, stream = data;
  std::int64_t lanes = type.lanes;
  if (e.converter) {
    const lane_converter& c = *e.converter;
    stream = c.name;
    lanes = c.out_lanes;
    text += net_text({.name = stream, .type = {.format = type.format, .lanes = lanes}});
    text += fmt::format("  mase_lanes #(.WIDTH({}), .IN_LANES({}), .OUT_LANES({})) {}_converter (\n"
                        "    .clk(clk), .rst(rst),\n    .data_in({}), .data_in_valid({}_valid), "
                        ".data_in_ready({}_ready),\n    .data_out({}), .data_out_valid({}_valid), "
                        ".data_out_ready({}_ready)\n  );\n",
                        c.width, c.in_lanes, c.out_lanes, stream, data, data, data, stream, stream, stream);
  }
  if (e.cast) {
    const format_cast& c = *e.cast;
    text += fmt::format("  mase_cast #(.IN_WIDTH({}), .IN_FRAC({}), .OUT_WIDTH({}), .OUT_FRAC({}), .SYMMETRIC({}), "
                        ".LANES({})) {}_cast (.data_in({}), .data_out({}));\n",
                        c.from.width, c.from.frac, c.to.width, c.to.frac,
                        c.to.ovf == overflow::saturate_symmetric ? 1 : 0, c.lanes, e.reader, stream, e.reader);
  } else {
    text += fmt::format("  assign {} = {};\n", e.reader, stream);
  }
  text += fmt::format("  assign {}_valid = {}_valid;\n  assign {}_ready = {}_ready;\n", e.reader, stream, stream, e.reader);
  return text;
}

inline std::string streams_text(const stream_edges& s) {
  if (!s.forked()) return edge_text(s.source, s.type, s.readers.front());
  // A fork: every reader gets every word through its own FIFO; the producer advances when all have room.
  std::string text, all_ready;
  for (const edge& e : s.readers) {
    const fork_fifo& fifo = e.fifo.value();
    text += fmt::format("  logic [{}:0] {}_data;\n  logic {}_data_valid, {}_data_ready, {}_in_ready;\n",
                        s.type.bits() - 1, fifo.name, fifo.name, fifo.name, fifo.name);
    text += fmt::format("  mase_fifo #(.WIDTH({}), .DEPTH({})) {} (\n    .clk(clk), .rst(rst),\n    .in_data({}), "
                        ".in_valid({}_valid & {}_ready), .in_ready({}_in_ready),\n    .out_data({}_data), "
                        ".out_valid({}_data_valid), .out_ready({}_data_ready)\n  );\n",
                        s.type.bits(), fifo.depth, fifo.name, s.source, s.source, s.source, fifo.name, fifo.name,
                        fifo.name, fifo.name);
    text += edge_text(fifo.name + "_data", s.type, e);
    all_ready += fmt::format("{}{}_in_ready", all_ready.empty() ? "" : " & ", fifo.name);
  }
  return text + fmt::format("  assign {}_ready = {};\n", s.source, all_ready);
}

inline std::string top_core_text(const design& d) {
  std::string body;
  for (const instance& c : d.instances) body += instance_text(c);
  body += "  // Streams between components\n";
  for (const stream_edges& s : d.streams) body += streams_text(s);
  std::string ports = "  input  logic clk,\n  input  logic rst";
  for (const port_data& p : d.inputs)
    ports += fmt::format(",\n  input  logic [{}:0] {},\n  input  logic {}_valid,\n  output logic {}_ready",
                         p.port.lanes * p.port.format.width - 1, p.port.name, p.port.name, p.port.name);
  for (const port_data& p : d.outputs)
    ports += fmt::format(",\n  output logic [{}:0] {},\n  output logic {}_valid,\n  input  logic {}_ready",
                         p.port.lanes * p.port.format.width - 1, p.port.name, p.port.name, p.port.name);
  return fmt::format("// Generated by mase: the components of the graph and the streams between them.\n"
                     "module top_core (\n{}\n);\n\n{}endmodule\n",
                     ports, body);
}

inline std::string top_text(const design& d) {
  std::string params, ports = "  input  logic clk,\n  input  logic rst", body;
  const auto add = [&](const stream_port& p, bool input) {
    const std::string& key = p.name;
    const std::string upper = mase::detail::upper(key);
    params += fmt::format("{}  parameter int {}_PRECISION_0 = {},\n  parameter int {}_PRECISION_1 = {},\n"
                          "  parameter int {}_PARALLELISM_DIM_0 = {}",
                          params.empty() ? "" : ",\n", upper, p.format.width, upper, p.format.frac, upper, p.lanes);
    ports += fmt::format(",\n  {} logic [{}_PRECISION_0-1:0] {} [{}_PARALLELISM_DIM_0-1:0],\n  {} logic {}_valid,\n"
                         "  {} logic {}_ready",
                         input ? "input " : "output", upper, key, upper, input ? "input " : "output", key,
                         input ? "output" : "input ", key);
    body += fmt::format("  logic [{}_PARALLELISM_DIM_0*{}_PRECISION_0-1:0] {}_flat;\n", upper, upper, key);
    body += fmt::format("  for (genvar l = 0; l < {}_PARALLELISM_DIM_0; l++) begin : g_{}\n", upper, key);
    if (input)
      body += fmt::format("    assign {}_flat[l*{}_PRECISION_0 +: {}_PRECISION_0] = {}[l];\n", key, upper, upper, key);
    else
      body += fmt::format("    assign {}[l] = {}_flat[l*{}_PRECISION_0 +: {}_PRECISION_0];\n", key, key, upper, upper);
    body += "  end\n";
  };
  for (const port_data& p : d.inputs) add(p.port, true);
  for (const port_data& p : d.outputs) add(p.port, false);
  std::string connections = "    .clk(clk),\n    .rst(rst)";
  for (const auto* list : {&d.inputs, &d.outputs})
    for (const port_data& p : *list)
      connections += fmt::format(",\n    .{0}({0}_flat),\n    .{0}_valid({0}_valid),\n    .{0}_ready({0}_ready)", p.port.name);
  return fmt::format(
      "// Generated by mase: the design's top level with MASE's port convention (one unpacked array\n"
      "// element per lane). The parameters describe the design; its widths are fixed by top_core.\n"
      "// PRECISION_1 is the fraction width of each port's fixed-point words.\n"
      "/* verilator lint_off UNUSEDPARAM */\n"
      "module top #(\n{}\n) (\n{}\n);\n/* verilator lint_on UNUSEDPARAM */\n{}\n  top_core core (\n{}\n  );\n\nendmodule\n",
      params, ports, body, connections);
}

}  // namespace detail

MASE_COMPILED_INLINE std::vector<project_file> render_project(const design& d) {
  std::vector<project_file> files;
  for (const instance& c : d.instances)
    for (const rom_placement& rom : c.roms)
      files.push_back({"rtl/" + rom.file, detail::hex_words(rom.image.codes, rom.image.lanes_per_word, rom.image.width)});
  for (const module_file& m : d.modules) files.push_back({"rtl/" + m.name + ".sv", m.text});
  files.push_back({"rtl/top_core.sv", detail::top_core_text(d)});
  files.push_back({"rtl/top.sv", detail::top_text(d)});
  for (const auto* list : {&d.inputs, &d.outputs})
    for (const port_data& p : *list)
      files.push_back({"tb/" + p.port.name + ".hex", detail::hex_words(p.codes, p.port.lanes, p.port.format.width)});
  files.push_back({"tb/tb.sv", detail::testbench_text(d)});
  files.push_back({"tb/sim_main.cpp", detail::verilator_main_text()});
  return files;
}

MASE_COMPILED_INLINE emit_info report_of(const design& d) {
  emit_info info;
  for (const instance& c : d.instances) {
    info.components.push_back(c.name);
    info.multipliers += c.multipliers;
    if (c.dot_product) {
      if (c.linear_layer) info.linear_layers.push_back(*c.dot_product);
      info.dot_product_layers.push_back(*c.dot_product);
    }
  }
  for (const module_file& m : d.modules) {
    info.modules.push_back(m.name);
    info.rtl_files.push_back(fs::path("rtl") / (m.name + ".sv"));
  }
  info.rtl_files.push_back("rtl/top_core.sv");
  info.rtl_files.push_back("rtl/top.sv");
  for (const port_data& p : d.inputs) info.inputs.push_back(p.port);
  for (const port_data& p : d.outputs) info.outputs.push_back(p.port);
  for (const stream_edges& s : d.streams) {
    info.forks += s.forked() ? 1 : 0;
    for (const edge& e : s.readers) {
      info.casts += e.cast ? 1 : 0;
      info.lane_converters += e.converter ? 1 : 0;
      if (e.fifo) info.fork_fifos.push_back(*e.fifo);
    }
  }
  info.samples = d.testbench.samples;
  return info;
}

}  // namespace mase::verilog
