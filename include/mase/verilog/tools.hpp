#pragma once
// Running the open-source tools on an emitted project: Verilator (lint, and its C++ model of the
// testbench), Icarus Verilog, yosys (synthesis for a target: verilog/target.hpp), and for an
// iCE40 target nextpnr-ice40 (placement, routing, timing) and icepack (the bitstream). Each
// runs in the project directory (the ROM paths are relative to it) with its log under sim/ or
// reports/; a tool that fails, or a simulation that prints no verdict, is a mase::error quoting
// the end of the log. They run only in a project mase emitted (its .mase-project marker), and
// write only into its work folders sim/ and reports/, which the project's manifest lists.

#include <mase/core/compiled.hpp>
#include <mase/core/error.hpp>
#include <mase/verilog/emit.hpp>
#include <mase/verilog/target.hpp>

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace mase::verilog {

enum class simulator : std::uint8_t { verilator, iverilog };

MASE_COMPILED_INLINE std::string_view to_string(simulator s) noexcept;

MASE_COMPILED_INLINE simulator simulator_from_string(std::string_view name);

struct simulation_result {
  std::int64_t passed = 0, failed = 0, cycles = 0;
  std::int64_t steady_cycles = 0, steady_samples = 0;  // data_out_0, first sample's end to the last's
  std::string log;
  bool ok() const { return failed == 0 && passed > 0; }
  // Cycles per sample once the pipeline is full (0 with a single sample).
  double cycles_per_sample() const {
    return steady_samples > 0 ? static_cast<double>(steady_cycles) / static_cast<double>(steady_samples) : 0.0;
  }
};

struct simulate_options {
  int stall_percent = 30;  // each side of the testbench idles this share of cycles
};

namespace detail {
// The whole text of a file the tools wrote (a log, a report).
MASE_COMPILED_INLINE std::string read_all(const fs::path& path);
}  // namespace detail

// Simulates the project's testbench and returns its verdict.
MASE_COMPILED_INLINE simulation_result simulate(const fs::path& project, simulator sim, const simulate_options& options = {});

// `verilator --lint-only -Wall` over the design; returns its warnings (empty when clean).
MASE_COMPILED_INLINE std::string lint(const fs::path& project);

// What yosys maps the design to, counted by the target's cell rules.
struct synthesis_report {
  std::string target{targets::xc7.name};
  std::int64_t cells = 0, flip_flops = 0, luts = 0, multipliers = 0, block_rams = 0, carry_chains = 0;
  std::int64_t block_rams_18k = 0;  // xc7: RAMB18E1 count one, RAMB36E1 two
  std::int64_t lut_rams = 0;        // xc7: distributed RAM cells (RAM32M, RAM64M, …)
  std::string stat;  // yosys's own table
  // Block RAMs in the family's unit, as the cost model counts them (resource_estimate::block_rams):
  // 18-Kbit halves on xc7, SB_RAM40_4K cells on iCE40.
  std::int64_t block_ram_units() const { return target == targets::xc7.name ? block_rams_18k : block_rams; }
};

// The resources of the last synthesis of a project (its reports/utilization.txt, counted by the
// rules of the target it was synthesized for).
MASE_COMPILED_INLINE synthesis_report read_synthesis_report(const fs::path& project);

// Synthesizes the project for t with yosys (reports/utilization.txt; for a target that places and
// routes, the netlist too, reports/netlist.json).
MASE_COMPILED_INLINE synthesis_report synthesize(const fs::path& project, const target& t = targets::xc7);

// Simulates the project's last synthesis (reports/netlist.v, yosys write_verilog after the
// target's synthesis) with Icarus Verilog and the cell models yosys ships for the target's
// family, driven by the same self-checking testbench: no synthesis step changed the function.
MASE_COMPILED_INLINE simulation_result simulate_netlist(const fs::path& project, const simulate_options& options = {});

// A resource of the part: how much of it the design uses.
struct resource_use {
  std::int64_t used = 0, available = 0;
};

// nextpnr's placement and routing of the last synthesis.
struct place_and_route_report {
  std::string target;
  resource_use logic_cells, dsps, block_rams, ios;
  double fmax_mhz = 0;        // the slowest clock's achieved frequency in nextpnr's timing analysis
  double constraint_mhz = 0;  // the frequency asked for (place_and_route_options)
  fs::path bitstream;         // icepack's binary, reports/top_core.bin
  std::string report;         // nextpnr's JSON report
};

struct place_and_route_options {
  double frequency_mhz = 12;  // nextpnr's --freq: it optimises towards it and reports against it
  int seed = 1;               // nextpnr's placer seed: the same seed, the same result
};

// Places and routes the project's last synthesis (synthesize with the same target first) with
// nextpnr-ice40 and packs the bitstream with icepack. A design that does not fit the part, or
// whose ports exceed the package's pins, is a mase::error quoting nextpnr.
MASE_COMPILED_INLINE place_and_route_report place_and_route(const fs::path& project, const target& t,
                                                            const place_and_route_options& options = {});

}  // namespace mase::verilog

#if !MASE_EXTERN_INSTANTIATIONS
#include <mase/verilog/tools_definitions.hpp>
#endif
