#pragma once
// The component library: each module's SystemVerilog text (written by mase, one header per
// module under verilog/rtl/), looked up by module name, and the parameters each module declares
// (read from its text, so the top level passes exactly those).

#include <mase/core/error.hpp>
#include <mase/verilog/rtl/mase_batch_norm.hpp>
#include <mase/verilog/rtl/mase_binary.hpp>
#include <mase/verilog/rtl/mase_cast.hpp>
#include <mase/verilog/rtl/mase_conv2d.hpp>
#include <mase/verilog/rtl/mase_fifo.hpp>
#include <mase/verilog/rtl/mase_lanes.hpp>
#include <mase/verilog/rtl/mase_linear.hpp>
#include <mase/verilog/rtl/mase_lut.hpp>
#include <mase/verilog/rtl/mase_matmul.hpp>
#include <mase/verilog/rtl/mase_pool2d.hpp>
#include <mase/verilog/rtl/mase_relu.hpp>
#include <mase/verilog/rtl/mase_rom.hpp>
#include <mase/verilog/rtl/mase_row_buffer.hpp>
#include <mase/verilog/rtl/mase_tile_accumulate.hpp>
#include <mase/verilog/rtl/mase_window_sweep.hpp>

#include <array>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace mase::verilog {

inline constexpr std::array<std::pair<std::string_view, std::string_view>, 15> component_library{{
    {"mase_batch_norm", rtl::mase_batch_norm},
    {"mase_binary", rtl::mase_binary},
    {"mase_cast", rtl::mase_cast},
    {"mase_conv2d", rtl::mase_conv2d},
    {"mase_fifo", rtl::mase_fifo},
    {"mase_lanes", rtl::mase_lanes},
    {"mase_linear", rtl::mase_linear},
    {"mase_lut", rtl::mase_lut},
    {"mase_matmul", rtl::mase_matmul},
    {"mase_pool2d", rtl::mase_pool2d},
    {"mase_relu", rtl::mase_relu},
    {"mase_rom", rtl::mase_rom},
    {"mase_row_buffer", rtl::mase_row_buffer},
    {"mase_tile_accumulate", rtl::mase_tile_accumulate},
    {"mase_window_sweep", rtl::mase_window_sweep},
}};

inline std::string_view component_source(std::string_view module) {
  for (const auto& [name, text] : component_library)
    if (name == module) return text;
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
