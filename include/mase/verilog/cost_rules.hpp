#pragma once
// How yosys maps a design's structure onto a device family: the rules each target (verilog/
// target.hpp) carries for the cost model (verilog/cost.hpp). Where yosys's own rules are simple
// they are followed exactly (multipliers onto DSP cells by mul2dsp's settings, memories onto block
// RAM, distributed RAM or logic by memory_libmap's costs); LUTs and flip-flops, which depend on
// ABC's mapping, come from a linear model fitted to yosys runs (benchmarks/hardware_cost_calibration,
// one fit per family; docs/hardware.md gives each fit's error).

#include <algorithm>
#include <array>
#include <cstdint>
#include <utility>

namespace mase::verilog::mapping {

constexpr std::int64_t ceil_div(std::int64_t a, std::int64_t b) noexcept { return (a + b - 1) / b; }

// Where a memory goes (counts of the family's cells).
struct memory_mapping {
  std::int64_t block_rams = 0;  // in the family's block-RAM unit: RAMB18 halves (xc7), SB_RAM40_4K (iCE40)
  std::int64_t lut_rams = 0;    // distributed RAM cells (xc7's RAM32M / RAM64M)
  std::int64_t logic_bits = 0;  // bits left to logic (a ROM's LUTs, a RAM's flip-flops)
};

// The fitted part: LUTs and flip-flops as a linear function of the structure.
// (Adders are left out: yosys puts them on carry chains, and their LUTs track the select bits.)
struct logic_model {
  double luts_per_component = 0, luts_per_select_bit = 0, luts_per_soft_product_bit = 0, luts_per_rom_lut = 0;
  double flip_flops_per_component = 0, flip_flops_per_register_bit = 0;
};

// A family's rules.
struct cost_rules {
  // DSP cells for one signed a×b multiplier (0: it stays in logic).
  std::int64_t (*dsps)(int a_width, int b_width) noexcept = nullptr;
  // Where memory_libmap puts `depth` words of `width` bits (read_only: a ROM; combinational_read:
  // read without a clock, which no block RAM does).
  memory_mapping (*memory)(std::int64_t width, std::int64_t depth, bool read_only,
                           bool combinational_read) noexcept = nullptr;
  int lut_inputs = 6;  // a ROM in logic takes a LUT per output bit per 2^lut_inputs words
  logic_model logic{};
};

// mul2dsp's splitting of a multiplier wider than the DSP: the wider-than-allowed operand is cut
// into pieces of `partial` bits (of which `headroom` are a zero sign bit, where the DSP multiplies
// signed operands only) and a last piece of the rest, each multiplied by the whole other operand
// and each mapped again (a last piece under the DSP's minimum width stays in logic). `fits(a, b)`
// is the DSP cells of a product within the DSP's ports (1, or 0 when too small).
template <class Fits>
constexpr std::int64_t split_product(int a, int b, int a_max, int b_max, int partial, int headroom,
                                     Fits fits) noexcept {
  const int data = partial - headroom;
  if (a > a_max) {
    const int pieces = (a - a_max + data - 1) / data;
    return pieces * split_product(partial, b, a_max, b_max, partial, headroom, fits) +
           split_product(a - pieces * data, b, a_max, b_max, partial, headroom, fits);
  }
  if (b > b_max) {
    const int pieces = (b - b_max + data - 1) / data;
    return pieces * split_product(a, partial, a_max, b_max, partial, headroom, fits) +
           split_product(a, b - pieces * data, a_max, b_max, partial, headroom, fits);
  }
  return fits(a, b);
}

// --- AMD/Xilinx 7 series under synth_xilinx ---

// DSP48E1 slices: mul2dsp with the xc7 settings (25×18 slices, signed only, so pieces of 18 bits
// hold 17 of data; a product under 9 bits, or an operand under 2, stays in LUTs).
constexpr std::int64_t dsp_slices_xc7(int a, int b) noexcept {
  if (a < b) std::swap(a, b);
  return split_product(a, b, 25, 18, 18, 1,
                       [](int x, int y) -> std::int64_t { return (std::min(x, y) < 2 || x + y < 9) ? 0 : 1; });
}

// memory_libmap's choice by the costs synth_xilinx gives it (brams_xc4v.txt, lutrams_xc5v.txt,
// -logic-cost-rom 1/64): a RAMB18 (cost 129) holds 16 Kbit as 512 words of 36 bits … 16K words of
// 1 bit; a RAMB36 (cost 257) twice that, to 72 bits; a memory the stream writes may take RAM32M
// (32 words of 6 bits) or RAM64M (64 of 3) at 8 each; logic costs 1/64 per bit of a ROM (its
// contents become LUTs) and 1 per bit of a RAM (flip-flops).
constexpr memory_mapping map_memory_xc7(std::int64_t width, std::int64_t depth, bool read_only,
                                        bool combinational_read) noexcept {
  constexpr std::array<std::int64_t, 7> port_widths{1, 2, 4, 9, 18, 36, 72};
  double best = -1;
  memory_mapping chosen{};
  const auto consider = [&](double cost, memory_mapping m) {
    if (best < 0 || cost < best) best = cost, chosen = m;
  };
  for (std::size_t i = 0; !combinational_read && i + 1 < port_widths.size(); ++i) {
    const std::int64_t words = std::int64_t{16384} >> i;  // a RAMB18 at port width i; a RAMB36 has twice the words
    const std::int64_t half = ceil_div(width, port_widths[i]) * ceil_div(depth, words);
    consider(129.0 * static_cast<double>(half), {.block_rams = half});
    const std::int64_t full = ceil_div(width, port_widths[i + 1]) * ceil_div(depth, words);
    consider(257.0 * static_cast<double>(full), {.block_rams = 2 * full});
  }
  if (!read_only) {
    const std::int64_t ram32 = ceil_div(width, 6) * ceil_div(depth, 32),
                       ram64 = ceil_div(width, 3) * ceil_div(depth, 64);
    consider(8.0 * static_cast<double>(std::min(ram32, ram64)), {.lut_rams = std::min(ram32, ram64)});
  }
  const std::int64_t bits = width * depth;
  consider(static_cast<double>(bits) * (read_only ? 1.0 / 64 : 1.0), {.logic_bits = bits});
  return chosen;
}

inline constexpr cost_rules xc7_rules{
    .dsps = dsp_slices_xc7,
    .memory = map_memory_xc7,
    .lut_inputs = 6,
    .logic = {.luts_per_component = 26.43,
              .luts_per_select_bit = 4.380,
              .luts_per_soft_product_bit = 2.131,
              .luts_per_rom_lut = 0.880,
              .flip_flops_per_component = 57.39,
              .flip_flops_per_register_bit = 0.540},
};

// --- Lattice iCE40 under synth_ice40 ---

// SB_MAC16 cells (synth_ice40 -dsp): mul2dsp with the iCE40 settings (16×16, signed or unsigned,
// so pieces of 16 bits; a product under 11 bits, or an operand under 2, stays in LUTs). A part
// without DSPs (the HX8K) is synthesized without -dsp: every product is logic.
constexpr std::int64_t mac16s_ice40(int a, int b) noexcept {
  if (a < b) std::swap(a, b);
  return split_product(a, b, 16, 16, 16, 0,
                       [](int x, int y) -> std::int64_t { return (std::min(x, y) < 2 || x + y < 11) ? 0 : 1; });
}
constexpr std::int64_t no_dsps(int, int) noexcept { return 0; }

// memory_libmap's choice by synth_ice40's costs (ice40/brams.txt): an SB_RAM40_4K costs 64 and
// holds 4 Kbit as 256 words of 16 bits, 512 of 8, 1024 of 4 or 2048 of 2; there is no distributed
// RAM; logic costs memory_libmap's defaults, 1/16 per bit of a ROM and 1 per bit of a RAM. A memory
// mapped onto block RAM costs 3 more than its blocks (measured with yosys 0.23: a ROM goes to one
// block from 1,072 bits, 67 × 16, at every width, and to two from 2,112), and block RAM wins a tie.
constexpr memory_mapping map_memory_ice40(std::int64_t width, std::int64_t depth, bool read_only,
                                          bool combinational_read) noexcept {
  if (combinational_read) return {.logic_bits = width * depth};
  std::int64_t blocks = -1;
  for (const std::int64_t port : {16, 8, 4, 2}) {
    const std::int64_t n = ceil_div(width, port) * ceil_div(depth, 4096 / port);
    if (blocks < 0 || n < blocks) blocks = n;
  }
  const std::int64_t bits = width * depth;
  const double logic = static_cast<double>(bits) * (read_only ? 1.0 / 16 : 1.0);
  if (64.0 * static_cast<double>(blocks) + 3 <= logic) return {.block_rams = blocks};
  return {.logic_bits = bits};
}

// (No per-component LUT term: the non-negative fit drops it on iCE40.)
inline constexpr logic_model ice40_logic{
    .luts_per_component = 0,
    .luts_per_select_bit = 7.014,
    .luts_per_soft_product_bit = 2.647,
    .luts_per_rom_lut = 1.058,
    .flip_flops_per_component = 60.03,
    .flip_flops_per_register_bit = 0.772,
};

inline constexpr cost_rules ice40_rules{
    .dsps = mac16s_ice40, .memory = map_memory_ice40, .lut_inputs = 4, .logic = ice40_logic};
inline constexpr cost_rules ice40_rules_without_dsps{
    .dsps = no_dsps, .memory = map_memory_ice40, .lut_inputs = 4, .logic = ice40_logic};

}  // namespace mase::verilog::mapping
