#pragma once
// Hardware cost as search objectives: each trial's quantized graph gets the hardware metadata
// emit_verilog would use, and the cost model (verilog/cost.hpp) gives the design's cycles per
// sample and its resources under yosys synth_xilinx, without emitting or synthesizing anything.
// A search with these objectives quantizes results for the hardware (space_spec::
// hardware_formats), so every trial is a design mase can emit.

#include <mase/core/error.hpp>
#include <mase/pass/add_hardware_metadata.hpp>
#include <mase/pass/pipeline.hpp>
#include <mase/search/objective.hpp>
#include <mase/verilog/cost.hpp>

#include <algorithm>
#include <array>
#include <string>
#include <string_view>

#include <fmt/core.h>

namespace mase::search {

// The hardware metrics, as MASE TOML metric names.
inline constexpr std::array<std::string_view, 6> hardware_metrics{"cycles_per_sample", "luts",   "flip_flops",
                                                                  "dsps",              "block_rams", "lut_rams"};

constexpr bool is_hardware_metric(std::string_view name) noexcept {
  return std::find(hardware_metrics.begin(), hardware_metrics.end(), name) != hardware_metrics.end();
}

// The cost model's estimate for a quantized graph (every hardware entry fixed point).
inline verilog::hardware_cost hardware_cost_of(const graph& quantized, const hardware_options& options) {
  const auto hardware =
      graph_with<fact::common_metadata, fact::quantized>(quantized) | add_hardware_metadata(options);
  return verilog::estimate_hardware_cost(hardware);
}

namespace objectives {

// One hardware metric (hardware_metrics), to minimize: cycles per sample in steady state, or
// LUTs, flip-flops, DSP slices, 18-Kbit block RAMs or distributed-RAM cells.
inline objective hardware(std::string_view metric, hardware_options options = {}) {
  if (!is_hardware_metric(metric))
    throw error(fmt::format("objective {}: not a hardware metric; they are cycles_per_sample, luts, flip_flops, dsps, "
                            "block_rams and lut_rams",
                            metric));
  return {std::string(metric), direction::minimize, [name = std::string(metric), options](const trial_view& t) {
            const verilog::hardware_cost cost = hardware_cost_of(t.quantized, options);
            const verilog::resource_estimate& r = cost.resources;
            if (name == "cycles_per_sample") return static_cast<double>(cost.cycles_per_sample);
            if (name == "luts") return r.luts;
            if (name == "flip_flops") return r.flip_flops;
            if (name == "dsps") return r.dsps;
            if (name == "block_rams") return r.block_rams;
            return r.lut_rams;
          }};
}

}  // namespace objectives

}  // namespace mase::search
