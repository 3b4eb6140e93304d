// mase emit-verilog: quantize with a TOML config, add hardware metadata, emit the project, and
// optionally lint, simulate (the testbench compares every output word with the bit-exact
// evaluator) and synthesize it.
#include "cli.hpp"

#include <mase/pass/split_attention.hpp>
#include <mase/verilog.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <string_view>

#include <fmt/format.h>

namespace mase_cli {

int run_emit_verilog(const emit_verilog_options& o) {
  // The design is built for one sample; the --input files' samples stream through it.
  loaded_model model = load_model(o.model, o.input_shapes, o.raise, o.inputs, /*one_sample=*/true);
  // The hardware has no fused attention: scores, scale, softmax and product each get a component.
  (void)mase::split_attention_of(model.graph);
  std::array<int, 4> parallelism{};
  for (std::size_t i = 0; i < parallelism.size(); ++i)
    parallelism[i] = o.parallelism.empty() ? 4 : o.parallelism[std::min(i, o.parallelism.size() - 1)];

  const quantized_model q = quantize_graph(model.graph, o.config, nullptr, /*for_hardware=*/true);
  const auto start = std::chrono::steady_clock::now();
  const auto hardware = mase::graph_with<mase::fact::common_metadata, mase::fact::quantized>(q.quantized) |
                        mase::add_hardware_metadata({.max_parallelism = parallelism, .channels_last = o.channels_last});

  mase::verilog::emit_options options{.project_dir = o.out, .samples = o.samples};
  const input_batches batches(model, o.inputs);
  if (batches.size() > 1) throw usage_error("mase emit-verilog takes each --input once (one batch of samples)");
  if (!batches.empty()) options.inputs = batches.load(0);
  const auto [design, info] = mase::run(hardware, mase::emit_verilog(options));
  const mase::verilog::emit_info& emitted = std::get<0>(info);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  std::string components;
  for (const std::string& name : emitted.components)
    components += fmt::format("{}{} ({})", components.empty() ? "" : ", ", name,
                              *hardware.at(name).meta.hardware.module);
  fmt::print("emitted {} in {:.2f} s: {} components: {}\n", emitted.project_dir.string(), seconds,
             emitted.components.size(), components);
  fmt::print("  {} parallel multipliers, {} forks, {} casts, {} lane converters; testbench: {} samples\n",
             emitted.multipliers, emitted.forks, emitted.casts, emitted.lane_converters, emitted.samples);
  // What the cost model says the target will take, before any tool runs.
  const mase::verilog::target& target = mase::verilog::target_from_string(o.target);
  const mase::verilog::hardware_cost cost = mase::verilog::estimate_hardware_cost(hardware, target);
  const mase::verilog::resource_estimate& estimate = cost.resources;
  const bool lut4 = target.family == mase::verilog::device_family::lattice_ice40;
  fmt::print("  cost model ({}): {} cycles per sample ({}); about {:.0f} {}, {:.0f} flip-flops, {:.0f} DSPs, {:.0f} block "
             "RAMs{}",
             target.name, cost.cycles_per_sample, cost.bottleneck, estimate.luts, lut4 ? "LUT4s" : "LUTs",
             estimate.flip_flops, estimate.dsps, estimate.block_rams, lut4 ? " (SB_RAM40_4K)" : " (18 Kbit)");
  if (const mase::verilog::device_capacity& part = target.capacity; part.logic_cells > 0)
    fmt::print("; the part has {} logic cells, {} DSPs, {} block RAMs", part.logic_cells, part.dsps, part.block_rams);
  fmt::print("\n");
  for (const mase::verilog::linear_cost& l : emitted.dot_product_layers)
    fmt::print("  {}: {} multiply-accumulates per sample on {} multipliers (ideal {} cycles)\n", l.node,
               l.macs_per_sample, l.multipliers, l.ideal_cycles());
  if (!q.derived_formats.empty())
    fmt::print("formats the config does not give, derived for the hardware (give data_out_width and "
               "data_out_frac_width in the node's config to choose them):\n{}",
               q.derived_formats);

  // The tools' steps take seconds to minutes: each says on stderr that it started.
  const auto starting = [](std::string_view what) {
    std::fflush(stdout);
    fmt::print(stderr, "mase emit-verilog: {}\n", what);
  };
  int status = 0;
  if (o.lint) {
    starting("linting with verilator --lint-only -Wall");
    const std::string warnings = mase::verilog::lint(emitted.project_dir);
    fmt::print("lint (verilator --lint-only -Wall): {}\n", warnings.empty() ? "clean" : "warnings");
    if (!warnings.empty()) {
      std::cout << warnings;
      status = 1;
    }
  }
  for (const std::string& name : o.simulators) {
    starting(fmt::format("building and running the testbench with {}", name));
    const mase::verilog::simulation_result r =
        mase::verilog::simulate(emitted.project_dir, mase::verilog::simulator_from_string(name));
    fmt::print("{}: {} passed, {} failed, {} cycles", name, r.passed, r.failed, r.cycles);
    if (r.steady_samples > 0) fmt::print(" ({:.1f} cycles per sample in steady state)", r.cycles_per_sample());
    fmt::print(" -> {}\n", r.ok() ? "bit-exact" : "MISMATCH");
    if (!r.ok()) status = 1;
  }
  if (o.synth) {
    const std::string_view pass = target.synthesis.substr(0, target.synthesis.find(' '));
    starting(fmt::format("synthesizing with yosys {} (a minute for a large design)", pass));
    const mase::verilog::synthesis_report s = mase::verilog::synthesize(emitted.project_dir, target);
    if (target.family == mase::verilog::device_family::xilinx_7series)
      fmt::print("yosys {}: {} cells, {} flip-flops, {} LUTs, {} multipliers (DSP48E1), {} block RAMs\n", pass, s.cells,
                 s.flip_flops, s.luts, s.multipliers, s.block_rams);
    else
      fmt::print("yosys {}: {} cells, {} flip-flops, {} LUT4s, {} carries, {} multipliers (SB_MAC16), {} block RAMs "
                 "(SB_RAM40_4K)\n",
                 pass, s.cells, s.flip_flops, s.luts, s.carry_chains, s.multipliers, s.block_rams);
    if (target.places_and_routes()) {
      starting(fmt::format("placing and routing with nextpnr-ice40 on {}", target.description));
      const mase::verilog::place_and_route_report r =
          mase::verilog::place_and_route(emitted.project_dir, target, {.frequency_mhz = o.frequency_mhz});
      fmt::print("nextpnr-ice40 ({} {}): {}/{} logic cells, {}/{} DSPs, {}/{} block RAMs, {}/{} I/Os; Fmax {:.2f} MHz "
                 "({} MHz asked)\nbitstream (icepack): {}\n",
                 target.nextpnr_device.substr(2), target.package, r.logic_cells.used, r.logic_cells.available,
                 r.dsps.used, r.dsps.available, r.block_rams.used, r.block_rams.available, r.ios.used, r.ios.available,
                 r.fmax_mhz, r.constraint_mhz, r.bitstream.string());
      // The rate the routed clock gives: one sample every cycles-per-sample cycles.
      if (cost.cycles_per_sample > 0 && r.fmax_mhz > 0)
        fmt::print("timing: {} cycles per sample at Fmax {:.2f} MHz: one sample every {:.0f} ns, {:.0f} samples per "
                   "second\n",
                   cost.cycles_per_sample, r.fmax_mhz, 1e3 * static_cast<double>(cost.cycles_per_sample) / r.fmax_mhz,
                   1e6 * r.fmax_mhz / static_cast<double>(cost.cycles_per_sample));
    }
    if (o.simulate_netlist) {
      starting("simulating the synthesized netlist with iverilog and yosys's cell models (minutes for a large design)");
      const mase::verilog::simulation_result r = mase::verilog::simulate_netlist(emitted.project_dir);
      fmt::print("netlist (iverilog, {} cells): {} passed, {} failed, {} cycles", target.name, r.passed, r.failed,
                 r.cycles);
      if (r.steady_samples > 0) fmt::print(" ({:.1f} cycles per sample in steady state)", r.cycles_per_sample());
      fmt::print(" -> {}\n", r.ok() ? "bit-exact" : "MISMATCH");
      if (!r.ok()) status = 1;
    }
  }
  return status;
}

}  // namespace mase_cli
