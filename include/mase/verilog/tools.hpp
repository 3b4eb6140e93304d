#pragma once
// Running the open-source tools on an emitted project: Verilator (lint, and its C++ model of the
// testbench), Icarus Verilog, and yosys (a synthesis estimate for a Xilinx 7-series part). Each
// runs in the project directory (the ROM paths are relative to it) with its log under sim/ or
// reports/; a tool that fails, or a simulation that prints no verdict, is a mase::error quoting
// the end of the log. They run only in a project mase emitted (its .mase-project marker), and
// write only into its work folders sim/ and reports/, which the project's manifest lists.

#include <mase/core/compiled.hpp>
#include <mase/core/error.hpp>
#include <mase/verilog/emit.hpp>

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

// What yosys's synth_xilinx maps the design to.
struct synthesis_report {
  std::int64_t cells = 0, flip_flops = 0, luts = 0, multipliers = 0, block_rams = 0, carry_chains = 0;
  std::int64_t block_rams_18k = 0;  // RAMB18E1 count one, RAMB36E1 two
  std::int64_t lut_rams = 0;        // distributed RAM cells (RAM32M, RAM64M, …)
  std::string stat;  // yosys's own table
};

// The resources of the last synthesis of a project (its reports/utilization.txt).
MASE_COMPILED_INLINE synthesis_report read_synthesis_report(const fs::path& project);

MASE_COMPILED_INLINE synthesis_report synthesize(const fs::path& project);

}  // namespace mase::verilog

#if !MASE_EXTERN_INSTANTIATIONS
#include <mase/verilog/tools_definitions.hpp>
#endif
