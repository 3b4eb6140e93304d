#pragma once
// Targets: the FPGA a design is implemented on, as values. A target names its device family and
// part, the yosys command that maps a design onto the family, the cells of that family's netlist
// (how a report's cell counts become LUTs, flip-flops, DSPs and block RAMs), the cost model's rules
// for the family (verilog/cost_rules.hpp), what the part holds, and, where an open-source
// place-and-route tool exists for it, that tool's device and package.
//
// - xc7: AMD/Xilinx 7 series through yosys synth_xilinx (a family, not one part: no capacity and
//   no open placement and routing).
// - ice40-up5k, ice40-hx8k: Lattice iCE40 through yosys synth_ice40, placed and routed by
//   nextpnr-ice40 (its utilisation and its timing analysis's Fmax) and packed into a bitstream by
//   icepack (Debian's yosys, nextpnr-ice40 and fpga-icestorm).

#include <mase/core/error.hpp>
#include <mase/verilog/cost_rules.hpp>

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include <fmt/core.h>

namespace mase::verilog {

enum class device_family : std::uint8_t { xilinx_7series, lattice_ice40 };

// What a part holds (0: unbounded, for a family rather than a part).
struct device_capacity {
  std::int64_t logic_cells = 0;  // LUTs (xc7) or logic cells of a LUT4 and a flip-flop (iCE40)
  std::int64_t dsps = 0;         // DSP48E1 / SB_MAC16
  std::int64_t block_rams = 0;   // RAMB18 halves / SB_RAM40_4K (4 Kbit)
  std::int64_t ios = 0;          // I/O cells (SB_IO sites) as nextpnr counts them; the package bonds fewer
};

// What a netlist cell counts as in a synthesis report.
// block_ram_pair: a cell of two of the family's block RAMs (a RAMB36E1 holds two RAMB18E1 halves).
enum class cell_role : std::uint8_t { flip_flop, lut, dsp, block_ram, block_ram_pair, carry, lut_ram };

// A cell type's name prefix and what it counts as; the first prefix that matches decides.
struct cell_rule {
  std::string_view prefix;
  cell_role role;
};

struct target {
  std::string_view name;         // as `mase emit-verilog --target` spells it
  std::string_view description;  // the family and part, for reports
  device_family family;
  // The yosys pass that maps the design (hierarchy -top top_core already run), without -top.
  std::string_view synthesis;
  std::span<const cell_rule> cells;
  // The simulation models of those cells yosys ships, under its data directory (yosys-config
  // --datdir): what simulate_netlist compiles the synthesized netlist with.
  std::string_view cell_models;
  mapping::cost_rules cost;  // how the cost model (verilog/cost.hpp) counts a design for this family
  device_capacity capacity{};
  // nextpnr-ice40's device flag and package; empty: no open-source placement and routing.
  std::string_view nextpnr_device{};
  std::string_view package{};

  bool places_and_routes() const noexcept { return !nextpnr_device.empty(); }
  friend constexpr bool operator==(const target& a, const target& b) noexcept { return a.name == b.name; }
};

namespace targets {

// RAMB36 before RAMB18 before RAM (distributed RAM: RAM32M, RAM64M, …).
inline constexpr std::array xc7_cells{
    cell_rule{"FD", cell_role::flip_flop},          cell_rule{"LUT", cell_role::lut},
    cell_rule{"DSP48", cell_role::dsp},             cell_rule{"RAMB36", cell_role::block_ram_pair},
    cell_rule{"RAMB18", cell_role::block_ram}, cell_rule{"CARRY", cell_role::carry},
    cell_rule{"RAM", cell_role::lut_ram},
};
inline constexpr std::array ice40_cells{
    cell_rule{"SB_DFF", cell_role::flip_flop},   cell_rule{"SB_LUT4", cell_role::lut},
    cell_rule{"SB_MAC16", cell_role::dsp},       cell_rule{"SB_RAM40_4K", cell_role::block_ram},
    cell_rule{"SB_CARRY", cell_role::carry},
};

inline constexpr target xc7{
    .name = "xc7",
    .description = "AMD/Xilinx 7 series (yosys synth_xilinx)",
    .family = device_family::xilinx_7series,
    .synthesis = "synth_xilinx -flatten",
    .cells = xc7_cells,
    .cell_models = "xilinx/cells_sim.v",
    .cost = mapping::xc7_rules,
};

// The part's logic cells, DSPs and RAMs (Lattice's iCE40 UltraPlus family data sheet) and its I/O cells
// as nextpnr counts them.
inline constexpr target ice40_up5k{
    .name = "ice40-up5k",
    .description = "Lattice iCE40 UltraPlus UP5K, SG48 (yosys synth_ice40, nextpnr-ice40)",
    .family = device_family::lattice_ice40,
    .synthesis = "synth_ice40 -dsp",
    .cells = ice40_cells,
    .cell_models = "ice40/cells_sim.v",
    .cost = mapping::ice40_rules,
    .capacity = {.logic_cells = 5280, .dsps = 8, .block_rams = 30, .ios = 96},
    .nextpnr_device = "--up5k",
    .package = "sg48",
};

// The HX8K in its CT256 package: no DSPs (logic cells and RAMs: Lattice's iCE40 LP/HX family data
// sheet; I/O cells as nextpnr counts them).
inline constexpr target ice40_hx8k{
    .name = "ice40-hx8k",
    .description = "Lattice iCE40 HX8K, CT256 (yosys synth_ice40, nextpnr-ice40)",
    .family = device_family::lattice_ice40,
    .synthesis = "synth_ice40",
    .cells = ice40_cells,
    .cell_models = "ice40/cells_sim.v",
    .cost = mapping::ice40_rules_without_dsps,
    .capacity = {.logic_cells = 7680, .dsps = 0, .block_rams = 32, .ios = 256},
    .nextpnr_device = "--hx8k",
    .package = "ct256",
};

inline constexpr std::array all{&xc7, &ice40_up5k, &ice40_hx8k};

}  // namespace targets

// The names of the targets (all of them, or those that place and route), as a list for messages.
inline std::string target_names(bool placing_and_routing_only = false) {
  std::string names;
  for (const target* t : targets::all)
    if (!placing_and_routing_only || t->places_and_routes()) names += fmt::format("{}{}", names.empty() ? "" : ", ", t->name);
  return names;
}

// The target `name` names (`xc7`, `ice40-up5k`, `ice40-hx8k`), or an error listing them.
inline const target& target_from_string(std::string_view name) {
  for (const target* t : targets::all)
    if (t->name == name) return *t;
  throw error(fmt::format("unknown target \"{}\"; the targets are {}", name, target_names()));
}

// What a cell type of t's netlist counts as, or none (a buffer, a constant driver, an I/O).
constexpr const cell_rule* cell_rule_of(const target& t, std::string_view cell) noexcept {
  for (const cell_rule& r : t.cells)
    if (cell.starts_with(r.prefix)) return &r;
  return nullptr;
}

}  // namespace mase::verilog
