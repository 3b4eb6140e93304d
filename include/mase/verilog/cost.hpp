#pragma once
// What a design costs before it is emitted: for each component of a graph with hardware metadata,
// its cycles per sample in steady state and the resources of the RTL mase generates for it, and
// for the design the slowest component's rate and the sum of the resources. It reads only the
// hardware metadata and the formats, so a search can cost thousands of configs in the time one
// synthesis takes.
//
// The structure (multipliers and their widths, memories, register and adder bits) is counted from
// the components' RTL. How yosys's synth_xilinx maps that structure onto a 7-series FPGA follows
// yosys's own rules where they are simple (multipliers onto DSP48E1 slices, memories onto block or
// distributed RAM by its cost table) and a linear model fitted to yosys runs where they are not
// (LUTs and flip-flops): the coefficients below come from benchmarks/hardware_cost_calibration on
// 25 designs, and docs/hardware.md reports the model's error against yosys on them.

#include <mase/core/compiled.hpp>
#include <mase/core/error.hpp>
#include <mase/ir/graph.hpp>
#include <mase/verilog/component.hpp>

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
struct multiplier_use {
  std::int64_t count = 0;
  int a_width = 0, b_width = 0;
};

// A memory: `copies` arrays of `depth` words of `width` bits (a ROM initialised from a file, or a
// buffer written by the stream).
struct memory_use {
  std::string_view what;
  std::int64_t width = 0, depth = 0, copies = 1;
  bool read_only = false;
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

// Resources of yosys synth_xilinx (7-series), as its `stat` counts them: LUTs (LUT1 to LUT6
// cells), flip-flops, DSP48E1 slices, block RAMs in 18-Kbit halves (a RAMB36E1 counts two), and
// distributed RAM cells (RAM32M, RAM64M: four LUTs of a slice each).
struct resource_estimate {
  double luts = 0, flip_flops = 0, dsps = 0, block_rams_18k = 0, lut_rams = 0;
};

struct hardware_cost {
  std::vector<component_cost> components{};
  std::int64_t cycles_per_sample = 0;  // the slowest stage's (components and the graph's inputs)
  std::string bottleneck{};            // the node (or graph input) that sets it
  resource_estimate resources{};
};

// How yosys maps structure onto the FPGA.
namespace mapping {

// DSP48E1 slices for one signed a×b multiplier: yosys's mul2dsp with the xc7 settings (25×18
// slices, pieces of 18 bits for wider operands with a sign bit of headroom; a product under 9
// bits, or an operand under 2, stays in LUTs).
constexpr std::int64_t dsp_slices(int a, int b) noexcept {
  if (a < b) std::swap(a, b);
  if (b < 2 || a + b < 9) return 0;
  if (a <= 25 && b <= 18) return 1;
  if (a > 25) {
    const int pieces = (a - 25 + 17 - 1) / 17;
    return pieces * dsp_slices(18, b) + dsp_slices(std::max(a - pieces * 17, 2), b);
  }
  const int pieces = (b - 18 + 17 - 1) / 17;
  return pieces * dsp_slices(a, 18) + dsp_slices(a, std::max(b - pieces * 17, 2));
}

// Where yosys's memory_libmap puts a memory, by the costs synth_xilinx gives it for the 7 series
// (brams_xc4v.txt, lutrams_xc5v.txt, -logic-cost-rom 1/64): a block RAM (a RAMB18, cost 129, holds
// 16 Kbit as 512 words of 36 bits … 16K words of 1 bit; a RAMB36, cost 257, twice that to 72
// bits), distributed RAM for a memory the stream writes (cost 8 per RAM32M, 32 words of 6 bits,
// or RAM64M, 64 words of 3 bits), or logic: a ROM costs 1/64 per bit (its contents become LUTs),
// a RAM 1 per bit (flip-flops).
struct memory_mapping {
  std::int64_t block_rams_18k = 0;  // a RAMB36 counts two
  std::int64_t lut_rams = 0;        // RAM32M / RAM64M cells
  std::int64_t logic_bits = 0;      // bits left to logic (a ROM's LUTs, a RAM's flip-flops)
};

constexpr std::int64_t ceil_div(std::int64_t a, std::int64_t b) noexcept { return (a + b - 1) / b; }

constexpr memory_mapping map_memory(std::int64_t width, std::int64_t depth, bool read_only) noexcept {
  constexpr std::array<std::int64_t, 7> port_widths{1, 2, 4, 9, 18, 36, 72};
  double best = -1;
  memory_mapping chosen{};
  const auto consider = [&](double cost, memory_mapping m) {
    if (best < 0 || cost < best) best = cost, chosen = m;
  };
  for (std::size_t i = 0; i + 1 < port_widths.size(); ++i) {
    const std::int64_t words = std::int64_t{16384} >> i;  // a RAMB18 at port width i; a RAMB36 has twice the words
    const std::int64_t half = ceil_div(width, port_widths[i]) * ceil_div(depth, words);
    consider(129.0 * static_cast<double>(half), {.block_rams_18k = half});
    const std::int64_t full = ceil_div(width, port_widths[i + 1]) * ceil_div(depth, words);
    consider(257.0 * static_cast<double>(full), {.block_rams_18k = 2 * full});
  }
  if (!read_only) {
    const std::int64_t ram32 = ceil_div(width, 6) * ceil_div(depth, 32), ram64 = ceil_div(width, 3) * ceil_div(depth, 64);
    consider(8.0 * static_cast<double>(std::min(ram32, ram64)), {.lut_rams = std::min(ram32, ram64)});
  }
  const std::int64_t bits = width * depth;
  consider(static_cast<double>(bits) * (read_only ? 1.0 / 64 : 1.0), {.logic_bits = bits});
  return chosen;
}

// The fitted part: LUTs and flip-flops as a linear function of the structure (coefficients from
// hardware_cost_calibration; docs/hardware.md gives the fit and its error).
// (Adders are left out: yosys puts them on carry chains, and their LUTs track the select bits.)
struct logic_model {
  double luts_per_component = 0, luts_per_select_bit = 0, luts_per_soft_product_bit = 0, luts_per_rom_lut = 0;
  double flip_flops_per_component = 0, flip_flops_per_register_bit = 0;
};

inline constexpr logic_model fitted_logic{
    .luts_per_component = 41.52,
    .luts_per_select_bit = 4.223,
    .luts_per_soft_product_bit = 2.501,
    .luts_per_rom_lut = 0.557,
    .flip_flops_per_component = 22.40,
    .flip_flops_per_register_bit = 0.739,
};

// The features the logic model weighs, summed over components: what the calibration fits.
struct logic_features {
  double components = 0, adder_bits = 0, select_bits = 0, soft_product_bits = 0, rom_luts = 0, register_bits = 0,
         dsps = 0;
};

inline logic_features features_of(const std::vector<component_cost>& components) {
  logic_features f;
  for (const component_cost& c : components) {
    if (!c.modelled) continue;
    f.components += 1;
    f.adder_bits += static_cast<double>(c.adder_bits);
    f.select_bits += static_cast<double>(c.select_bits);
    f.register_bits += static_cast<double>(c.register_bits);
    for (const multiplier_use& m : c.multipliers) {
      const std::int64_t slices = dsp_slices(m.a_width, m.b_width);
      f.dsps += static_cast<double>(m.count * slices);
      if (slices == 0) f.soft_product_bits += static_cast<double>(m.count) * m.a_width * m.b_width;
    }
    for (const memory_use& m : c.memories) {
      const memory_mapping mapped = map_memory(m.width, m.depth, m.read_only);
      if (mapped.block_rams_18k > 0) continue;  // the read register is inside the block RAM
      // Distributed RAM and logic keep the synchronous read's register in flip-flops. A ROM in
      // logic: each output bit a function of the address, one LUT6 per 64 words; a RAM in logic:
      // its flip-flops.
      f.register_bits += static_cast<double>(m.copies * m.width);
      if (mapped.logic_bits == 0) continue;
      if (m.read_only) f.rom_luts += static_cast<double>(m.copies * m.width * ceil_div(m.depth, 64));
      else f.register_bits += static_cast<double>(m.copies * mapped.logic_bits);
    }
  }
  return f;
}

inline resource_estimate resources_of(const std::vector<component_cost>& components,
                                      const logic_model& model = fitted_logic) {
  resource_estimate r;
  for (const component_cost& c : components)
    for (const memory_use& m : c.memories) {
      const memory_mapping mapped = map_memory(m.width, m.depth, m.read_only);
      r.block_rams_18k += static_cast<double>(m.copies * mapped.block_rams_18k);
      r.lut_rams += static_cast<double>(m.copies * mapped.lut_rams);
    }
  const logic_features f = features_of(components);
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

// The cost of the design emit_verilog would write for g (which has hardware metadata).
MASE_COMPILED_INLINE hardware_cost estimate_hardware_cost(const graph& g);

}  // namespace mase::verilog

#if !MASE_EXTERN_INSTANTIATIONS
#include <mase/verilog/cost_definitions.hpp>
#endif
