// The hardware cost model (verilog/cost.hpp) against the tools it predicts: the emitted design's
// cycles per sample against Verilator's steady state without stalls, its DSP slices and block
// RAMs against yosys synth_xilinx, and its LUTs and flip-flops within the error the calibration
// measured (docs/hardware.md: at most 47% and 52% on its 25 designs).

#include <mase/ir/builder.hpp>
#include <mase/pass/add_common_metadata.hpp>
#include <mase/pass/init_metadata.hpp>
#include <mase/pass/quantize.hpp>
#include <mase/verilog.hpp>
#include <mase/verilog/cost.hpp>

#include "hardware_designs.hpp"
#include "project_dir.hpp"

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <string>

using namespace mase;
namespace fs = std::filesystem;

namespace {

using namespace mase_hardware_designs;

auto hardware_graph(const graph& g, const quantize_config& config, std::array<int, 4> parallelism) {
  return full_range_parameters(g, 5) | init_metadata | add_common_metadata | quantize(config) |
         add_hardware_metadata({.max_parallelism = parallelism});
}

using mase_test_verilog::project_dir;

double relative_error(double model, double truth) { return std::abs(model - truth) / std::max(truth, 1.0); }

}  // namespace

TEST_CASE("hardware cost: DSP slices follow yosys's mul2dsp rule for 7-series slices", "[verilog][cost]") {
  using verilog::mapping::dsp_slices;
  CHECK(dsp_slices(4, 4) == 0);   // an 8-bit product stays in LUTs
  CHECK(dsp_slices(4, 5) == 1);   // 9 bits: a slice
  CHECK(dsp_slices(1, 16) == 0);  // an operand under 2 bits
  CHECK(dsp_slices(25, 18) == 1);
  CHECK(dsp_slices(18, 25) == 1);  // operands swap so the wider takes the 25-bit port
  CHECK(dsp_slices(26, 18) == 2);  // 26 bits: one 18-bit piece (17 bits and a sign) and the rest
  CHECK(dsp_slices(25, 19) == 2);
}

TEST_CASE("hardware cost: memories go where yosys's memory_libmap costs put them", "[verilog][cost]") {
  using verilog::mapping::map_memory;
  // A 128 x 128-bit ROM costs 256 in logic (1/64 per bit) against 516 in four RAMB18s.
  CHECK(map_memory(128, 128, true).logic_bits == 128 * 128);
  // 192 x 1024: 3072 in logic against 11 RAMB18s (1024 x 18) at 1419.
  CHECK(map_memory(192, 1024, true).block_rams_18k == 11);
  // A 32 x 32-bit buffer: six RAM32Ms (6 bits of 32 words each).
  CHECK(map_memory(32, 32, false).lut_rams == 6);
  // A 32 x 128-bit buffer: one RAMB18 (129) beats 22 RAM64Ms (176).
  CHECK(map_memory(32, 128, false).block_rams_18k == 1);
}

TEST_CASE("hardware cost: cycles per sample equal Verilator's, DSPs and block RAMs equal yosys's", "[verilog][cost][tools]") {
  struct design {
    std::string name;
    graph g;
    quantize_config config;
    std::array<int, 4> parallelism;
  };
  const design designs[] = {{"mlp_gelu", mlp({64, 32, 10}, true), widths(8, 8), {4, 4, 4, 4}},
                            {"mlp_narrow", mlp({64, 32, 10}, true), widths(4, 6), {8, 8, 8, 8}},
                            {"cnn", cnn(2, 8, 4), widths(8, 6), {4, 4, 4, 4}}};
  for (const design& d : designs) {
    INFO(d.name);
    const auto hw = hardware_graph(d.g, d.config, d.parallelism);
    const verilog::hardware_cost model = verilog::estimate_hardware_cost(hw);
    const fs::path dir = project_dir(fmt::format("hardware_cost_{}", d.name));
    (void)run(hw, emit_verilog({.project_dir = dir, .samples = 6}));
    const verilog::simulation_result sim = verilog::simulate(dir, verilog::simulator::verilator, {.stall_percent = 0});
    REQUIRE(sim.failed == 0);
    CHECK(static_cast<double>(model.cycles_per_sample) == sim.cycles_per_sample());
    const verilog::synthesis_report yosys = verilog::synthesize(dir);
    CHECK(model.resources.dsps == static_cast<double>(yosys.multipliers));
    CHECK(model.resources.block_rams_18k == static_cast<double>(yosys.block_rams_18k));
    CHECK(model.resources.lut_rams == static_cast<double>(yosys.lut_rams));
    CHECK(relative_error(model.resources.luts, static_cast<double>(yosys.luts)) <= 0.47);
    CHECK(relative_error(model.resources.flip_flops, static_cast<double>(yosys.flip_flops)) <= 0.52);
  }
}

TEST_CASE("hardware cost: an encoder layer's cycles per sample equal Verilator's", "[verilog][cost][tools]") {
  for (const std::array<int, 4>& parallelism : {std::array<int, 4>{2, 2, 2, 2}, std::array<int, 4>{4, 8, 4, 4}}) {
    INFO("max_parallelism " << parallelism[0] << ", " << parallelism[1]);
    const auto hw = hardware_graph(encoder_layer(8, 32, 2, 64), widths(8, 8), parallelism);
    const verilog::hardware_cost model = verilog::estimate_hardware_cost(hw);
    const fs::path dir = project_dir(fmt::format("hardware_cost_encoder_{}x{}", parallelism[0], parallelism[1]));
    (void)run(hw, emit_verilog({.project_dir = dir, .samples = 6}));
    const verilog::simulation_result sim = verilog::simulate(dir, verilog::simulator::verilator, {.stall_percent = 0});
    REQUIRE(sim.failed == 0);
    INFO("the model's bottleneck: " << model.bottleneck);
    CHECK(static_cast<double>(model.cycles_per_sample) == sim.cycles_per_sample());
  }
}
