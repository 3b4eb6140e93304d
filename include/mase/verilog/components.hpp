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
#include <span>
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

// mase's modules (an op's hardware facet names one; the emitter adds the internal ones).
inline constexpr std::array component_library{
    component{.module = "mase_batch_norm", .source = rtl::mase_batch_norm, .needs = component_needs::cast,
              .channels_last = true},
    // A broadcast operand is banked whole before the first output.
    component{.module = "mase_binary", .source = rtl::mase_binary, .timing = component_timing::sample,
              .needs = component_needs::cast, .channels_last = true},
    component{.module = "mase_cast", .source = rtl::mase_cast},
    // All of input 0 first. Channels-last only along the channels (the planner checks the dimension).
    component{.module = "mase_cat", .source = rtl::mase_cat, .timing = component_timing::sample,
              .exact_by_formats = true},
    // The two-bank sample buffer; a line-buffered one (line_buffered) waits for rows and holds a
    // few (the emitter's timing_of).
    component{.module = "mase_conv2d", .source = rtl::mase_conv2d, .timing = component_timing::sample,
              .sample_banks = 2, .needs = component_needs::conv, .channels_last = true},
    component{.module = "mase_embedding", .source = rtl::mase_embedding, .timing = component_timing::sample,
              .exact_by_formats = true},
    component{.module = "mase_fifo", .source = rtl::mase_fifo},
    component{.module = "mase_lanes", .source = rtl::mase_lanes},
    component{.module = "mase_layer_norm", .source = rtl::mase_layer_norm, .timing = component_timing::sample,  // a row
              .needs = component_needs::cast},
    component{.module = "mase_linear", .source = rtl::mase_linear, .timing = component_timing::sample,  // two row banks
              .needs = component_needs::tiles},
    component{.module = "mase_line_sweep", .source = rtl::mase_line_sweep},
    component{.module = "mase_lut", .source = rtl::mase_lut, .channels_last = true},
    component{.module = "mase_matmul", .source = rtl::mase_matmul, .timing = component_timing::sample,
              .needs = component_needs::tiles},
    component{.module = "mase_mean", .source = rtl::mase_mean, .timing = component_timing::sample,  // a run
              .needs = component_needs::mean, .channels_last = true},
    component{.module = "mase_permute", .source = rtl::mase_permute, .timing = component_timing::sample,
              .sample_banks = 2, .exact_by_formats = true},  // a sample in each bank
    component{.module = "mase_pixel_sweep", .source = rtl::mase_pixel_sweep},
    // As mase_conv2d. A max is exact by its formats; an average's division is the evaluator's mean
    // rule, which the emitter reads from the node's lowering (and so requires).
    component{.module = "mase_pool2d", .source = rtl::mase_pool2d, .timing = component_timing::sample,
              .sample_banks = 2, .exact_by_formats = true, .needs = component_needs::pool, .channels_last = true},
    component{.module = "mase_reciprocal_divide", .source = rtl::mase_reciprocal_divide},
    component{.module = "mase_relu", .source = rtl::mase_relu, .needs = component_needs::cast, .channels_last = true},
    component{.module = "mase_rescale", .source = rtl::mase_rescale, .exact_by_formats = true, .channels_last = true},
    component{.module = "mase_ring_rows", .source = rtl::mase_ring_rows},
    component{.module = "mase_rom", .source = rtl::mase_rom},
    // Its first kept word may come after every word it drops.
    component{.module = "mase_slice", .source = rtl::mase_slice, .timing = component_timing::sample,
              .exact_by_formats = true},
    component{.module = "mase_row_buffer", .source = rtl::mase_row_buffer},
    component{.module = "mase_sample_sweep", .source = rtl::mase_sample_sweep},
    component{.module = "mase_softmax", .source = rtl::mase_softmax, .timing = component_timing::sample},  // a row
    component{.module = "mase_sweep_stage", .source = rtl::mase_sweep_stage},
    component{.module = "mase_tile_accumulate", .source = rtl::mase_tile_accumulate},
    component{.module = "mase_window_sweep", .source = rtl::mase_window_sweep},
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
