#pragma once
// A component descriptor: everything the hardware flow knows of one of mase's RTL modules, in one
// value. Each built-in component declares its own under verilog/components/ (or, for the modules
// only other components instantiate, in the registry, verilog/components.hpp).

#include <mase/format/fixed.hpp>
#include <mase/ir/graph.hpp>

#include <array>
#include <cstdint>
#include <span>
#include <string_view>

namespace mase {

// A conv or pool whose output channels' windows each read only their own input channel (groups =
// channels = output channels: every pool, depthwise convolutions): mase_window_sweep keeps a ring
// of rows of one channel for it (mase_line_sweep) rather than two samples, so its input beats
// hold whole rows (its lanes divide the row).
constexpr bool windows_read_one_channel(std::int64_t channels, std::int64_t groups, std::int64_t out_channels) noexcept {
  return groups == channels && out_channels == channels;
}

}  // namespace mase

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

// One of mase's RTL modules: its name, its SystemVerilog text, the modules it instantiates, and
// what the planner and the emitter must know of its streams and timing.
struct component {
  std::string_view module;
  std::string_view source;
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
  // Its structure for the cost model (verilog/cost.hpp); none: a module the model does not know,
  // costed as its input stream's pace and nothing else.
  void (*cost)(const cost_context&, component_cost&) = nullptr;
};

namespace component_timing {
inline constexpr first_output beat = first_output::after_one_beat;
inline constexpr first_output sample = first_output::after_a_sample;
}  // namespace component_timing

namespace component_needs {
inline constexpr std::array<std::string_view, 1> cast{"mase_cast"};
inline constexpr std::array<std::string_view, 2> mean{"mase_reciprocal_divide", "mase_cast"};
inline constexpr std::array<std::string_view, 4> tiles{"mase_row_buffer", "mase_tile_accumulate", "mase_rom", "mase_cast"};
inline constexpr std::array<std::string_view, 8> conv{"mase_window_sweep", "mase_pixel_sweep", "mase_line_sweep",
                                                      "mase_sample_sweep", "mase_ring_rows",   "mase_sweep_stage",
                                                      "mase_rom",          "mase_cast"};
inline constexpr std::array<std::string_view, 8> pool{"mase_window_sweep", "mase_pixel_sweep",       "mase_line_sweep",
                                                      "mase_sample_sweep", "mase_ring_rows",         "mase_sweep_stage",
                                                      "mase_reciprocal_divide", "mase_cast"};
}  // namespace component_needs

// mase's module called `module`, or nullptr (verilog/components.hpp, the registry, defines it).
inline const component* find_component(std::string_view module) noexcept;

}  // namespace mase::verilog
