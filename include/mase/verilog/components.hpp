#pragma once
// The component library: each module's SystemVerilog text (written by mase, one header per
// module under verilog/rtl/), looked up by module name, and the parameters each module declares
// (read from its text, so the top level passes exactly those).

#include <mase/core/error.hpp>
#include <mase/verilog/rtl/mase_batch_norm.hpp>
#include <mase/verilog/rtl/mase_binary.hpp>
#include <mase/verilog/rtl/mase_cast.hpp>
#include <mase/verilog/rtl/mase_cat.hpp>
#include <mase/verilog/rtl/mase_conv2d.hpp>
#include <mase/verilog/rtl/mase_embedding.hpp>
#include <mase/verilog/rtl/mase_fifo.hpp>
#include <mase/verilog/rtl/mase_lanes.hpp>
#include <mase/verilog/rtl/mase_layer_norm.hpp>
#include <mase/verilog/rtl/mase_line_sweep.hpp>
#include <mase/verilog/rtl/mase_linear.hpp>
#include <mase/verilog/rtl/mase_permute.hpp>
#include <mase/verilog/rtl/mase_pixel_sweep.hpp>
#include <mase/verilog/rtl/mase_lut.hpp>
#include <mase/verilog/rtl/mase_matmul.hpp>
#include <mase/verilog/rtl/mase_mean.hpp>
#include <mase/verilog/rtl/mase_pool2d.hpp>
#include <mase/verilog/rtl/mase_reciprocal_divide.hpp>
#include <mase/verilog/rtl/mase_relu.hpp>
#include <mase/verilog/rtl/mase_rescale.hpp>
#include <mase/verilog/rtl/mase_ring_rows.hpp>
#include <mase/verilog/rtl/mase_rom.hpp>
#include <mase/verilog/rtl/mase_sample_sweep.hpp>
#include <mase/verilog/rtl/mase_slice.hpp>
#include <mase/verilog/rtl/mase_sweep_stage.hpp>
#include <mase/verilog/rtl/mase_row_buffer.hpp>
#include <mase/verilog/rtl/mase_softmax.hpp>
#include <mase/verilog/rtl/mase_tile_accumulate.hpp>
#include <mase/verilog/rtl/mase_window_sweep.hpp>

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/core.h>

namespace mase::verilog {

// When a component's first output word can appear, for sizing a fork's FIFOs (emit.hpp).
enum class first_output : std::uint8_t {
  after_one_beat,  // each output beat follows from the input beats just before it (a register or two)
  after_a_sample,  // may need up to a whole input sample first: a window, a row, a bank, a skipped run
};

// One of mase's RTL modules: its name, its SystemVerilog text, and what the emitter must know of
// its timing.
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
};

namespace component_timing {
inline constexpr first_output beat = first_output::after_one_beat;
inline constexpr first_output sample = first_output::after_a_sample;
}  // namespace component_timing

// mase's modules (an op's hardware facet names one; the emitter adds the internal ones).
inline constexpr std::array component_library{
    component{"mase_batch_norm", rtl::mase_batch_norm},
    // A broadcast operand is banked whole before the first output.
    component{"mase_binary", rtl::mase_binary, component_timing::sample},
    component{"mase_cast", rtl::mase_cast},
    component{"mase_cat", rtl::mase_cat, component_timing::sample, 0, true},  // all of input 0 first
    // The two-bank sample buffer; a line-buffered one (line_buffered) waits for rows and holds a
    // few (the emitter's timing_of).
    component{"mase_conv2d", rtl::mase_conv2d, component_timing::sample, 2},
    component{"mase_embedding", rtl::mase_embedding, component_timing::sample, 0, true},
    component{"mase_fifo", rtl::mase_fifo},
    component{"mase_lanes", rtl::mase_lanes},
    component{"mase_layer_norm", rtl::mase_layer_norm, component_timing::sample},  // a row
    component{"mase_linear", rtl::mase_linear, component_timing::sample},  // a row (two row banks)
    component{"mase_line_sweep", rtl::mase_line_sweep},
    component{"mase_lut", rtl::mase_lut},
    component{"mase_matmul", rtl::mase_matmul, component_timing::sample},
    component{"mase_mean", rtl::mase_mean, component_timing::sample},  // a run
    component{"mase_permute", rtl::mase_permute, component_timing::sample, 2, true},  // a sample in each bank
    component{"mase_pixel_sweep", rtl::mase_pixel_sweep},
    // As mase_conv2d. A max is exact by its formats; an average's division is the evaluator's mean
    // rule, which the emitter reads from the node's lowering (and so requires).
    component{"mase_pool2d", rtl::mase_pool2d, component_timing::sample, 2, true},
    component{"mase_reciprocal_divide", rtl::mase_reciprocal_divide},
    component{"mase_relu", rtl::mase_relu},
    component{"mase_rescale", rtl::mase_rescale, component_timing::beat, 0, true},
    component{"mase_ring_rows", rtl::mase_ring_rows},
    component{"mase_rom", rtl::mase_rom},
    // Its first kept word may come after every word it drops.
    component{"mase_slice", rtl::mase_slice, component_timing::sample, 0, true},
    component{"mase_row_buffer", rtl::mase_row_buffer},
    component{"mase_sample_sweep", rtl::mase_sample_sweep},
    component{"mase_softmax", rtl::mase_softmax, component_timing::sample},  // a row
    component{"mase_sweep_stage", rtl::mase_sweep_stage},
    component{"mase_tile_accumulate", rtl::mase_tile_accumulate},
    component{"mase_window_sweep", rtl::mase_window_sweep},
};

// mase's module called `module`, or nullptr.
constexpr const component* find_component(std::string_view module) noexcept {
  for (const component& c : component_library)
    if (c.module == module) return &c;
  return nullptr;
}

inline std::string_view component_source(std::string_view module) {
  if (const component* c = find_component(module)) return c->source;
  throw error(fmt::format("emit_verilog: no component module named {}", module));
}

// A character of a Verilog identifier.
constexpr bool is_name_char(char c) noexcept {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
}

// The names of a module's parameters, in declaration order: every `parameter [type] NAME =` in
// its text's header (between `#(` and the port list).
inline std::vector<std::string> component_parameters(std::string_view text) {
  std::vector<std::string> names;
  for (std::size_t at = text.find("parameter"); at != std::string_view::npos; at = text.find("parameter", at + 1)) {
    if (at > 0 && is_name_char(text[at - 1])) continue;  // localparameter-like words
    const std::size_t equals = text.find('=', at);
    if (equals == std::string_view::npos) break;
    const std::string_view declaration = text.substr(at, equals - at);
    if (declaration.find_first_of("\n;,()") != std::string_view::npos) continue;  // prose, not a declaration
    std::size_t end = equals;
    while (end > at && (text[end - 1] == ' ' || text[end - 1] == '\t')) --end;
    std::size_t begin = end;
    while (begin > at && is_name_char(text[begin - 1])) --begin;
    if (begin < end) names.emplace_back(text.substr(begin, end - begin));
  }
  return names;
}

}  // namespace mase::verilog
