#pragma once
// A component descriptor: everything the hardware flow knows of one of mase's RTL modules, in one
// value. Each built-in component declares its own under verilog/components/ (or, for the modules
// only other components instantiate, in the registry, verilog/components.hpp).

#include <mase/format/fixed.hpp>
#include <mase/ir/graph.hpp>

#include <mase/core/error.hpp>
#include <mase/verilog/module_interface.hpp>
#include <mase/verilog/rtl/mase_cast.hpp>
#include <mase/verilog/rtl/mase_fifo.hpp>
#include <mase/verilog/rtl/mase_lanes.hpp>
#include <mase/verilog/rtl/mase_line_sweep.hpp>
#include <mase/verilog/rtl/mase_pixel_sweep.hpp>
#include <mase/verilog/rtl/mase_reciprocal_divide.hpp>
#include <mase/verilog/rtl/mase_ring_rows.hpp>
#include <mase/verilog/rtl/mase_rom.hpp>
#include <mase/verilog/rtl/mase_row_buffer.hpp>
#include <mase/verilog/rtl/mase_sample_sweep.hpp>
#include <mase/verilog/rtl/mase_sweep_stage.hpp>
#include <mase/verilog/rtl/mase_tile_accumulate.hpp>
#include <mase/verilog/rtl/mase_window_sweep.hpp>
#include <mase/core/ordered_map.hpp>
#include <mase/core/tensor.hpp>

#include <array>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace mase {

// A conv or pool whose output channels' windows each read only their own input channel (groups =
// channels = output channels: every pool, depthwise convolutions): mase_window_sweep keeps a ring
// of rows of one channel for it (mase_line_sweep) rather than two samples, so its input beats
// hold whole rows (its lanes divide the row).
constexpr bool windows_read_one_channel(std::int64_t channels, std::int64_t groups, std::int64_t out_channels) noexcept {
  return groups == channels && out_channels == channels;
}

}  // namespace mase

namespace mase::eval {
struct fixed_lowering;  // eval/lowering.hpp
}  // namespace mase::eval

namespace mase::verilog {

struct component_cost;  // verilog/cost.hpp

// When a component's first output word can appear, for sizing a fork's FIFOs (emit.hpp).
enum class first_output : std::uint8_t {
  after_one_beat,  // each output beat follows from the input beats just before it (a register or two)
  after_a_sample,  // may need up to a whole input sample first: a window, a row, a bank, a skipped run
};

// What every component's cost starts from: the node, its input and result formats, and its
// streams' sizes.
struct cost_context {
  const node& n;
  std::int64_t batch = 1;  // the samples the graph's tensors hold (mase::detail::hardware_batch)
  fixed_fmt x, out;        // data_in_0's and data_out_0's formats
  std::int64_t in_elements = 0, in_lanes = 1, out_lanes = 1;  // per sample; lanes per beat
  std::int64_t stream_cycles = 0;                             // beats of data_in_0 per sample
};

// What add_hardware_metadata gives a component's descriptor for a node (its stream inputs'
// parameters already in h.verilog_param): the descriptor adds the component's own parameters in
// MASE's names, checks what the hardware cannot do, and returns its result's lanes.
struct metadata_context {
  const graph& g;
  const node& n;
  hardware_meta& h;  // n's
  std::int64_t batch = 1;                          // as in cost_context
  std::int64_t stream_limit = 1, tile_limit = 1;   // hardware_options::max_parallelism[0] and [1]
  std::span<const std::int64_t> lanes{};           // per node of g: the lanes of its result's stream
  std::int64_t input_lanes(std::size_t i) const { return lanes[n.inputs.at(i).index]; }
};

// What planning one instance of a component reads: its node and graph, and the bit-exact
// evaluator's run of the node, from which its ROMs and derived parameters are rendered (never
// derived again).
struct plan_context {
  const node& n;
  const graph& g;
  std::int64_t batch = 1;                               // as in cost_context
  const eval::fixed_lowering* lowering = nullptr;       // the evaluator's, where the node has one
  const ordered_map<tensor>* quantized_parameters = nullptr;  // the node's, as the evaluator holds them
  std::span<const tensor* const> constant_operands{};   // per input: a constant operand as the kernel reads it
  const eval::fixed_lowering& lowering_of() const {
    require(lowering != nullptr, "emit_verilog: node {} ({}) has no fixed-point lowering for its formats", n.name,
            n.op_name());
    return *lowering;
  }
  const tensor& constant_operand(std::size_t input) const {
    require(input < constant_operands.size() && constant_operands[input] != nullptr,
            "emit_verilog: node {} ({}): input {} is no constant operand", n.name, n.op_name(), input);
    return *constant_operands[input];
  }
};

// A ROM of an instance: rtl/<node>_<role>.hex, `lanes_per_word` codes of `width` bits a word,
// which the module reads through its parameter <ROLE>_MEMFILE.
struct rom_image {
  std::string role;
  std::vector<std::int64_t> codes;
  std::int64_t lanes_per_word = 1;
  int width = 1;
};

// A non-negative constant of `width` bits, for a parameter beyond a Verilog integer's 32 bits (a
// divider's 64-bit multiplier and offsets).
struct sized_constant {
  int width = 64;
  std::int64_t value = 0;
  friend bool operator==(const sized_constant&, const sized_constant&) = default;
};

// A file of the project a module reads, such as a ROM's image (rtl/<node>_<role>.hex), as the
// path the simulators and yosys open from the project folder.
struct project_path {
  std::string path;
  friend bool operator==(const project_path&, const project_path&) = default;
};

// An instance's module parameter, typed: a number, a flag, a list of numbers, a string (the
// hardware metadata's kinds, verilog_value), a sized constant, or a file of the project. The
// printer writes each as its Verilog literal (render_project).
using parameter_value =
    std::variant<std::int64_t, bool, std::vector<std::int64_t>, std::string, sized_constant, project_path>;

// What an instance adds to its node's metadata: the parameters the descriptor derives, by name,
// its ROMs, and its work for the emitter's report (emit_info).
struct instance_plan {
  std::map<std::string, parameter_value> parameters;
  std::vector<rom_image> roms;
  std::int64_t multipliers = 0;      // parallel multipliers it instantiates
  bool dot_product = false;          // a dot-product component (emit_info::dot_product_layers)
  std::int64_t macs_per_sample = 0;  // a dot product's multiply-accumulates per sample
  void parameter(const std::string& name, std::int64_t value) { parameters[name] = value; }
  void rom(std::string role, std::vector<std::int64_t> codes, std::int64_t lanes_per_word, int width) {
    roms.push_back({std::move(role), std::move(codes), lanes_per_word, width});
  }
};

// One of mase's RTL modules: its name, its SystemVerilog text, the modules it instantiates, and
// what the planner and the emitter must know of its streams and timing.
struct component {
  std::string_view module;
  // A module of a user's as a whole text (its parameters and clock read from its header).
  std::string_view source = {};
  // mase's own: the module declared (verilog/module_interface.hpp), its header printed from that.
  module_text text = {};
  first_output timing = first_output::after_one_beat;
  // Input banks, each of a whole input sample, that fill while its output waits: the samples a
  // branch through it takes in before the branch's reader must read anything.
  std::int64_t sample_banks = 0;
  // Exact by its formats alone: it only moves values (or the binary point), or its formats make
  // its arithmetic exact, so it needs no integer rule in the bit-exact evaluator.
  bool exact_by_formats = false;
  // The modules its text instantiates, each a file of the RTL library beside its own.
  std::span<const std::string_view> needs = {};
  // It takes and gives rank-4 streams in channels-last order (its tables follow the stream order).
  bool channels_last = false;
  // It sweeps windows over a map with mase_window_sweep (a conv or a pool), which keeps rows
  // where it can (components/window_cost.hpp's line_buffered) rather than whole samples.
  bool window_sweep = false;
  // Its parameters in the hardware metadata (none: its streams' only) and its result's lanes
  // (none: its first input's).
  std::int64_t (*metadata)(const metadata_context&) = nullptr;
  // Its structure for the cost model (verilog/cost.hpp); none: a module the model does not know,
  // costed as its input stream's pace and nothing else.
  void (*cost)(const cost_context&, component_cost&) = nullptr;
  // What one instance needs beyond its node's metadata parameters; none: nothing.
  void (*plan)(const plan_context&, instance_plan&) = nullptr;
};

// The modules that only other components and the emitter instantiate (casts, FIFOs, lane
// converters, ROMs, the sweeps' stages), by name; each op-facing component's name is its
// descriptor's (verilog/components/).
namespace module_names {
inline constexpr std::string_view cast = rtl::mase_cast.name;
inline constexpr std::string_view fifo = rtl::mase_fifo.name;
inline constexpr std::string_view lanes = rtl::mase_lanes.name;
inline constexpr std::string_view line_sweep = rtl::mase_line_sweep.name;
inline constexpr std::string_view pixel_sweep = rtl::mase_pixel_sweep.name;
inline constexpr std::string_view reciprocal_divide = rtl::mase_reciprocal_divide.name;
inline constexpr std::string_view ring_rows = rtl::mase_ring_rows.name;
inline constexpr std::string_view rom = rtl::mase_rom.name;
inline constexpr std::string_view row_buffer = rtl::mase_row_buffer.name;
inline constexpr std::string_view sample_sweep = rtl::mase_sample_sweep.name;
inline constexpr std::string_view sweep_stage = rtl::mase_sweep_stage.name;
inline constexpr std::string_view tile_accumulate = rtl::mase_tile_accumulate.name;
inline constexpr std::string_view window_sweep = rtl::mase_window_sweep.name;
}  // namespace module_names

namespace component_timing {
inline constexpr first_output beat = first_output::after_one_beat;
inline constexpr first_output sample = first_output::after_a_sample;
}  // namespace component_timing

namespace component_needs {
using namespace module_names;
inline constexpr std::array<std::string_view, 1> cast{module_names::cast};
inline constexpr std::array<std::string_view, 2> mean{reciprocal_divide, module_names::cast};
inline constexpr std::array<std::string_view, 4> tiles{row_buffer, tile_accumulate, rom, module_names::cast};
inline constexpr std::array<std::string_view, 8> conv{window_sweep, pixel_sweep, line_sweep, sample_sweep,
                                                      ring_rows,    sweep_stage, rom,        module_names::cast};
inline constexpr std::array<std::string_view, 8> pool{window_sweep, pixel_sweep, line_sweep, sample_sweep,
                                                      ring_rows,    sweep_stage, reciprocal_divide, module_names::cast};
}  // namespace component_needs

// mase's module called `module`, or nullptr (verilog/components.hpp, the registry, defines it).
inline const component* find_component(std::string_view module) noexcept;

// Node n's component: its op's own descriptor (hardware_mapping::component, a user's), or mase's
// by the module its hardware metadata names (else its op's facet names), or nullptr.
inline const component* component_of(const node& n) noexcept;

}  // namespace mase::verilog
