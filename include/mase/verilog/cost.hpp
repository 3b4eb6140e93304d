#pragma once
// What a design costs before it is emitted: for each component of a graph with hardware metadata,
// its cycles per sample in steady state and the resources of the RTL mase generates for it, and
// for the design the slowest component's rate and the sum of the resources. It reads only the
// hardware metadata and the formats, so a search can cost thousands of configs in the time one
// synthesis takes.
//
// The structure (multipliers and their widths, memories, register and adder bits) is counted from
// the components' RTL. How yosys maps that structure onto a target's family is the target's cost
// rules (verilog/cost_rules.hpp): yosys's own rules where they are simple (multipliers onto DSP
// cells, memories onto block or distributed RAM by its cost tables) and a linear model fitted to
// yosys runs where they are not (LUTs and flip-flops); docs/hardware.md reports each family's
// error against yosys.

#include <mase/core/compiled.hpp>
#include <mase/core/error.hpp>
#include <mase/ir/graph.hpp>
#include <mase/verilog/component.hpp>
#include <mase/verilog/target.hpp>

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/core.h>

namespace mase::verilog {

// `count` multipliers of an a-bit by a b-bit signed operand.
// pipeline_bits: each one's operand and product registers, flip-flops unless a DSP takes them.
struct multiplier_use {
  std::int64_t count = 0;
  int a_width = 0, b_width = 0;
  std::int64_t pipeline_bits = 0;
};

// A memory: `copies` arrays of `depth` words of `width` bits (a ROM initialised from a file, or a
// buffer written by the stream), read on the clock edge or, combinationally, without one.
struct memory_use {
  std::string_view what;
  std::int64_t width = 0, depth = 0, copies = 1;
  bool read_only = false;
  bool combinational_read = false;
};

// The structure of one component.
struct component_cost {
  std::string node, module;
  std::int64_t cycles_per_sample = 0;  // steady state, one sample after another, no stalls
  std::vector<multiplier_use> multipliers{};
  std::vector<memory_use> memories{};
  std::int64_t register_bits = 0;  // the datapath's flip-flops: accumulators, pipeline and output registers
  std::int64_t adder_bits = 0;     // adders, accumulators and comparators, bit for bit
  std::int64_t select_bits = 0;    // multiplexed bits: casts' saturation, lane selects
  bool modelled = true;            // false: a user's component, costed as nothing
};

// Resources as the target's yosys `stat` counts them: LUTs (xc7: LUT1 to LUT6; iCE40: SB_LUT4),
// flip-flops, DSP cells (DSP48E1 / SB_MAC16), block RAMs in the family's unit (xc7: 18-Kbit halves,
// a RAMB36E1 counting two; iCE40: SB_RAM40_4K), and distributed RAM cells (xc7's RAM32M, RAM64M:
// four LUTs of a slice each; iCE40 has none).
struct resource_estimate {
  double luts = 0, flip_flops = 0, dsps = 0, block_rams = 0, lut_rams = 0;
};

struct hardware_cost {
  std::string target{targets::xc7.name};  // whose rules the resources follow
  std::vector<component_cost> components{};
  std::int64_t cycles_per_sample = 0;  // the slowest stage's (components and the graph's inputs)
  std::string bottleneck{};            // the node (or graph input) that sets it
  resource_estimate resources{};
};

namespace mapping {

// The features the logic model weighs, summed over components: what the calibration fits.
struct logic_features {
  double components = 0, adder_bits = 0, select_bits = 0, soft_product_bits = 0, rom_luts = 0, register_bits = 0,
         dsps = 0;
};

inline logic_features features_of(const std::vector<component_cost>& components, const cost_rules& rules) {
  logic_features f;
  for (const component_cost& c : components) {
    if (!c.modelled) continue;
    f.components += 1;
    f.adder_bits += static_cast<double>(c.adder_bits);
    f.select_bits += static_cast<double>(c.select_bits);
    f.register_bits += static_cast<double>(c.register_bits);
    for (const multiplier_use& m : c.multipliers) {
      const std::int64_t slices = rules.dsps(m.a_width, m.b_width);
      f.dsps += static_cast<double>(m.count * slices);
      if (slices == 0) {
        f.soft_product_bits += static_cast<double>(m.count) * m.a_width * m.b_width;
        f.register_bits += static_cast<double>(m.count * m.pipeline_bits);
      }
    }
    for (const memory_use& m : c.memories) {
      const memory_mapping mapped = rules.memory(m.width, m.depth, m.read_only, m.combinational_read);
      if (mapped.block_rams > 0) continue;  // the read register is inside the block RAM
      // Distributed RAM and logic keep a synchronous read's register in flip-flops. A ROM in
      // logic: each output bit a function of the address, one LUT per 2^lut_inputs words; a RAM in
      // logic: its flip-flops.
      if (!m.combinational_read) f.register_bits += static_cast<double>(m.copies * m.width);
      if (mapped.logic_bits == 0) continue;
      const std::int64_t words_per_lut = std::int64_t{1} << rules.lut_inputs;
      if (m.read_only) f.rom_luts += static_cast<double>(m.copies * m.width * ceil_div(m.depth, words_per_lut));
      else f.register_bits += static_cast<double>(m.copies * mapped.logic_bits);
    }
  }
  return f;
}

inline resource_estimate resources_of(const std::vector<component_cost>& components, const cost_rules& rules) {
  resource_estimate r;
  for (const component_cost& c : components)
    for (const memory_use& m : c.memories) {
      const memory_mapping mapped = rules.memory(m.width, m.depth, m.read_only, m.combinational_read);
      r.block_rams += static_cast<double>(m.copies * mapped.block_rams);
      r.lut_rams += static_cast<double>(m.copies * mapped.lut_rams);
    }
  const logic_features f = features_of(components, rules);
  const logic_model& model = rules.logic;
  r.dsps = f.dsps;
  r.luts = model.luts_per_component * f.components + model.luts_per_select_bit * f.select_bits +
           model.luts_per_soft_product_bit * f.soft_product_bits + model.luts_per_rom_lut * f.rom_luts;
  r.flip_flops = model.flip_flops_per_component * f.components + model.flip_flops_per_register_bit * f.register_bits;
  return r;
}

}  // namespace mapping

namespace detail {

// A hardware parameter of a node (add_hardware_metadata's verilog_param), or an error naming it.
inline std::int64_t param_int(const node& n, std::string_view key) {
  const auto it = n.meta.hardware.verilog_param.find(key);
  require(it != n.meta.hardware.verilog_param.end(),
          "emit_verilog: node {} has no hardware parameter {}; run add_hardware_metadata first", n.name, key);
  if (const bool* b = std::get_if<bool>(&it->second)) return *b ? 1 : 0;
  return std::get<std::int64_t>(it->second);
}

// How many table entries a word of a convolution's or pool's parameter ROMs (weights, bias)
// holds. Channels-last, the lanes of a beat are channels and read their entries in one word
// (`channel_lanes`: a convolution's output lanes). Otherwise a word holds one entry. (Batch norm's
// tables follow its CHANNELS_LAST parameter, which [N, C] features set too.)
inline std::int64_t entries_per_rom_word(const node& n, std::int64_t channel_lanes) {
  return n.meta.hardware.channels_last ? channel_lanes : 1;
}

constexpr int bits_for(std::int64_t values) noexcept {
  return values <= 1 ? 1 : std::bit_width(static_cast<std::uint64_t>(values - 1));
}

// The structure of node n's component (n has hardware metadata and is not implicit).
// `batch`: the samples the graph's tensors hold (mase::detail::hardware_batch).
MASE_COMPILED_INLINE component_cost component_cost_of(const node& n, std::int64_t batch);

}  // namespace detail

// The cost of the design emit_verilog would write for g (which has hardware metadata), on target t.
MASE_COMPILED_INLINE hardware_cost estimate_hardware_cost(const graph& g, const target& t = targets::xc7);

}  // namespace mase::verilog

#if !MASE_EXTERN_INSTANTIATIONS
#include <mase/verilog/cost_definitions.hpp>
#endif
