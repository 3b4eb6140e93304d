#pragma once
// The component registry: every component descriptor (verilog/component.hpp) the hardware flow
// knows, looked up by module name.

#include <mase/core/error.hpp>
#include <mase/ir/ops.hpp>
#include <mase/verilog/component.hpp>
#include <mase/verilog/components/mase_batch_norm.hpp>
#include <mase/verilog/components/mase_binary.hpp>
#include <mase/verilog/components/mase_cat.hpp>
#include <mase/verilog/components/mase_conv2d.hpp>
#include <mase/verilog/components/mase_embedding.hpp>
#include <mase/verilog/components/mase_layer_norm.hpp>
#include <mase/verilog/components/mase_linear.hpp>
#include <mase/verilog/components/mase_lut.hpp>
#include <mase/verilog/components/mase_matmul.hpp>
#include <mase/verilog/components/mase_mean.hpp>
#include <mase/verilog/components/mase_permute.hpp>
#include <mase/verilog/components/mase_pool2d.hpp>
#include <mase/verilog/components/mase_relu.hpp>
#include <mase/verilog/components/mase_rescale.hpp>
#include <mase/verilog/components/mase_slice.hpp>
#include <mase/verilog/components/mase_softmax.hpp>

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/core.h>

namespace mase::verilog {

// Every component: those an op's hardware facet names, and the ones they and the emitter
// instantiate (FIFOs, lane converters, casts, ROMs, the sweeps' stages).
inline constexpr std::array component_library{
    components::mase_batch_norm,
    components::mase_binary,
    component{.module = module_names::cast, .text = rtl::mase_cast},
    components::mase_cat,
    components::mase_conv2d,
    components::mase_embedding,
    component{.module = module_names::fifo, .text = rtl::mase_fifo},
    component{.module = module_names::lanes, .text = rtl::mase_lanes},
    components::mase_layer_norm,
    components::mase_linear,
    component{.module = module_names::line_sweep, .text = rtl::mase_line_sweep},
    components::mase_lut,
    components::mase_matmul,
    components::mase_mean,
    components::mase_permute,
    component{.module = module_names::pixel_sweep, .text = rtl::mase_pixel_sweep},
    components::mase_pool2d,
    component{.module = module_names::reciprocal_divide, .text = rtl::mase_reciprocal_divide},
    components::mase_relu,
    components::mase_rescale,
    component{.module = module_names::ring_rows, .text = rtl::mase_ring_rows},
    component{.module = module_names::rom, .text = rtl::mase_rom},
    components::mase_slice,
    component{.module = module_names::row_buffer, .text = rtl::mase_row_buffer},
    component{.module = module_names::sample_sweep, .text = rtl::mase_sample_sweep},
    components::mase_softmax,
    component{.module = module_names::sweep_stage, .text = rtl::mase_sweep_stage},
    component{.module = module_names::tile_accumulate, .text = rtl::mase_tile_accumulate},
    component{.module = module_names::window_sweep, .text = rtl::mase_window_sweep},
};

// Every module a built-in op's hardware facet names has a descriptor here: checked where the
// registry compiles, so an op cannot name a component nobody wrote.
template <class... Ops>
consteval bool every_facet_has_a_component(op_list<Ops...>) {
  const auto described = [](const hardware_mapping* h) {
    if (h == nullptr || h->wired_through() || h->component != nullptr) return true;
    for (const component& c : component_library)
      if (c.module == h->module) return c.text.declared() || !c.source.empty();
    return false;
  };
  return (described(hardware_of<Ops>()) && ...);
}
static_assert(every_facet_has_a_component(builtin_ops{}),
              "a built-in op's hardware facet names a module without a descriptor in component_library");

// A built-in op whose component computes (it is not exact by its formats alone) names the integer
// rule its testbench's words come from (its integer_rule facet, ir/op/op_base.hpp), or is a
// function of one operand that mase_lut tabulates.
template <class... Ops>
consteval bool every_computing_component_has_a_rule(op_list<Ops...>) {
  const auto ruled = []<class Op>(const Op*) {
    const hardware_mapping* h = hardware_of<Op>();
    if (h == nullptr || h->wired_through() || h->component != nullptr) return true;
    for (const component& c : component_library)
      if (c.module == h->module) return c.exact_by_formats || op_with_integer_rule<Op> || c.module == components::mase_lut.module;
    return false;
  };
  return (ruled(static_cast<const Ops*>(nullptr)) && ...);
}
static_assert(every_computing_component_has_a_rule(builtin_ops{}),
              "a built-in op's component computes but the op names no integer_rule for the bit-exact evaluator");

inline const component* find_component(std::string_view module) noexcept {
  for (const component& c : component_library)
    if (c.module == module) return &c;
  return nullptr;
}

inline const component* component_of(const node& n) noexcept {
  const hardware_mapping* facet = n.op.hardware();
  if (facet != nullptr && facet->component != nullptr) return facet->component;
  if (n.meta.hardware.module) return find_component(*n.meta.hardware.module);
  return facet != nullptr ? find_component(facet->module) : nullptr;
}

// A module's whole text: its description, its header printed from its declaration and its body,
// or a user's module as written.
inline std::string component_source(const component& c) {
  return c.text.declared() ? module_source(c.text) : std::string(c.source);
}
inline std::string component_source(std::string_view module) {
  if (const component* c = find_component(module)) return component_source(*c);
  throw error(fmt::format("emit_verilog: no component module named {}", module));
}

// A character of a Verilog identifier.
constexpr bool is_name_char(char c) noexcept {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
}

// The names of the parameters of a module written as a whole text (a user's), in declaration
// order: every `parameter [type] NAME =` in its header (between `#(` and the port list). mase's
// own modules declare theirs (parameter_names).
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
