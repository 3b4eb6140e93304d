#pragma once
// A hardware design as a value: what planning a quantized graph decides (verilog/emit.hpp's
// plan_design) and what every printer reads (render_project: the SystemVerilog, the ROM images,
// the testbench and its data). Nothing here refers to the graph: the design holds the components'
// instances with their parameters, the nets of their streams, and each reader's edge from a
// stream with its fork FIFO, lane converter and cast, so a printer is a pure function of it.

#include <mase/format/fixed.hpp>
#include <mase/verilog/component.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace mase::verilog {

// A stream's words: `lanes` fixed-point values of one format a beat.
struct stream_type {
  fixed_fmt format{};
  std::int64_t lanes = 1;
  std::int64_t bits() const noexcept { return lanes * format.width; }
  friend bool operator==(const stream_type&, const stream_type&) = default;
};

// A port of the top level.
struct stream_port {
  std::string name;     // data_in_0, data_out_0, …
  std::string node;     // the graph input it feeds / the node whose result it carries
  fixed_fmt format{};
  std::int64_t lanes = 1;
  std::int64_t beats = 0;  // in the testbench's data
};

// A dot-product component's work per sample: for the cycles-versus-ideal check.
struct linear_cost {
  std::string node;
  std::int64_t macs_per_sample = 0;
  std::int64_t multipliers = 0;
  std::int64_t ideal_cycles() const { return multipliers == 0 ? 0 : (macs_per_sample + multipliers - 1) / multipliers; }
};

// A fork's FIFO to one of its readers.
struct fork_fifo {
  std::string name;  // the instance in top_core.sv
  std::int64_t depth = 0;             // words (beats of the fork's stream)
  std::int64_t beats_per_sample = 0;  // of the fork's stream
};

// A module the design instantiates, and its text (rtl/<name>.sv).
struct module_file {
  std::string name;
  std::string text;
};

// A stream net: <name> (lanes × width bits), <name>_valid and <name>_ready.
struct stream_net {
  std::string name;
  stream_type type{};
};

// One of an instance's module parameters and its value. The top level names it
// <instance>_<NAME> (a localparam, MASE's naming of a node's parameters), but for a file of the
// project, which the instance takes inline.
struct parameter_binding {
  std::string name;
  parameter_value value;
  bool named_at_top_level() const noexcept { return !std::holds_alternative<project_path>(value); }
};

struct port_binding {
  std::string port;
  std::string signal;
};

// A ROM image of an instance, written to rtl/<file>.
struct rom_placement {
  std::string file;
  rom_image image;
};

// One component instance: a node's module, its parameters, its ports' signals and the nets it
// declares, its ROMs, and its work for the report.
struct instance {
  std::string name;    // the node's; the instance is <name>_inst
  std::string op;      // the node's op, for the text's comment
  std::string module;
  std::vector<parameter_binding> parameters{};  // in the module's declaration order
  std::vector<port_binding> ports{};
  std::vector<std::string> constant_operand_ready{};  // nets of constant operands' ready ports (no stream)
  std::vector<stream_net> nets{};                     // its stream inputs', then its result's
  std::vector<rom_placement> roms{};
  std::int64_t multipliers = 0;
  std::optional<linear_cost> dot_product{};  // a dot-product component's work
  bool linear_layer = false;                 // its op is (or lowers as) a linear layer
};

// A lane converter (mase_lanes) on an edge: <name>, its output stream.
struct lane_converter {
  std::string name;
  std::int64_t width = 1, in_lanes = 1, out_lanes = 1;
};

// The hardware cast (mase_cast: floor, then saturate) between two formats of an edge.
struct format_cast {
  fixed_fmt from{}, to{};
  std::int64_t lanes = 1;
};

// One reader's edge from a stream: through its fork FIFO when the stream has several readers, a
// lane converter when it takes another number of lanes, and the cast when its format differs.
struct edge {
  std::string reader;  // the reader's input stream, or the top's data_out_<k>
  std::optional<fork_fifo> fifo{};
  std::optional<lane_converter> converter{};
  std::optional<format_cast> cast{};
};

// A stream from a component or a graph input to its readers.
struct stream_edges {
  std::string source;  // the producer's data_out_0 net, or the top's data_in_<k>
  stream_type type{};
  std::vector<edge> readers{};
  bool forked() const noexcept { return readers.size() > 1; }
};

// A top-level stream and its testbench words: the stimulus or the expected results, as codes.
struct port_data {
  stream_port port;
  std::vector<std::int64_t> codes{};
};

// What the self-checking testbench needs beyond the ports.
struct testbench_plan {
  std::int64_t samples = 0;
  std::uint32_t seed = 1;
  std::int64_t timeout_cycles = 0;
};

struct design {
  std::vector<module_file> modules{};  // by name
  std::vector<instance> instances{};   // in graph order
  std::vector<stream_edges> streams{};
  std::vector<port_data> inputs{}, outputs{};  // the top's ports (outputs by name)
  testbench_plan testbench{};
};

// A file of a project: its path under the project folder and its text.
struct project_file {
  std::string path;
  std::string text;
};

}  // namespace mase::verilog
