// The hardware cost model (verilog/cost.hpp) against the tools it predicts: the emitted design's
// cycles per sample against Verilator's steady state without stalls, its DSP cells and block RAMs
// against yosys (synth_xilinx for xc7, synth_ice40 -dsp for the iCE40 UP5K), and its LUTs and
// flip-flops within the largest error each family's calibration measured with the committed
// coefficients (docs/hardware.md: 34% and 34% on xc7, 43% and 37% on iCE40).

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
#include <vector>

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

// The designs both families' checks against the tools build.
struct cost_design {
  std::string name;
  graph g;
  quantize_config config;
  std::array<int, 4> parallelism;
};

std::vector<cost_design> cost_designs() {
  return {{"mlp_gelu", mlp({64, 32, 10}, true), widths(8, 8), {4, 4, 4, 4}},
          {"mlp_narrow", mlp({64, 32, 10}, true), widths(4, 6), {8, 8, 8, 8}},
          {"cnn", cnn(2, 8, 4), widths(8, 6), {4, 4, 4, 4}}};
}

}  // namespace

TEST_CASE("hardware cost: DSP slices follow yosys's mul2dsp rule for 7-series slices", "[verilog][cost]") {
  const auto dsp_slices = verilog::mapping::dsp_slices_xc7;
  CHECK(dsp_slices(4, 4) == 0);   // an 8-bit product stays in LUTs
  CHECK(dsp_slices(4, 5) == 1);   // 9 bits: a slice
  CHECK(dsp_slices(1, 16) == 0);  // an operand under 2 bits
  CHECK(dsp_slices(25, 18) == 1);
  CHECK(dsp_slices(18, 25) == 1);  // operands swap so the wider takes the 25-bit port
  CHECK(dsp_slices(26, 18) == 2);  // 26 bits: one 18-bit piece (17 bits and a sign) and the rest
  CHECK(dsp_slices(25, 19) == 2);
}

TEST_CASE("hardware cost: memories go where yosys's memory_libmap costs put them", "[verilog][cost]") {
  const auto map_memory = verilog::mapping::map_memory_xc7;
  // A 128 x 128-bit ROM costs 256 in logic (1/64 per bit) against 516 in four RAMB18s.
  CHECK(map_memory(128, 128, true, false).logic_bits == 128 * 128);
  // 192 x 1024: 3072 in logic against 11 RAMB18s (1024 x 18) at 1419.
  CHECK(map_memory(192, 1024, true, false).block_rams == 11);
  // A 32 x 32-bit buffer: six RAM32Ms (6 bits of 32 words each).
  CHECK(map_memory(32, 32, false, false).lut_rams == 6);
  // A 32 x 128-bit buffer: one RAMB18 (129) beats 22 RAM64Ms (176).
  CHECK(map_memory(32, 128, false, false).block_rams == 1);
}

// The references are yosys 0.23's synth_ice40 -dsp on a registered signed a×b product, and on a
// ROM (its contents spread over every bit) or RAM of width × depth read on the clock.
TEST_CASE("hardware cost: SB_MAC16s follow yosys's mul2dsp rule for iCE40", "[verilog][cost]") {
  const auto mac16s = verilog::mapping::mac16s_ice40;
  CHECK(mac16s(8, 8) == 1);
  CHECK(mac16s(5, 5) == 0);  // a 10-bit product stays in LUTs
  CHECK(mac16s(5, 6) == 1);  // 11 bits: a MAC16
  CHECK(mac16s(1, 12) == 0);
  CHECK(mac16s(2, 12) == 1);
  CHECK(mac16s(16, 16) == 1);
  CHECK(mac16s(17, 8) == 1);   // a 16-bit piece and a 1-bit rest in LUTs
  CHECK(mac16s(17, 16) == 1);
  CHECK(mac16s(24, 16) == 2);  // pieces of 16 bits and 8
  CHECK(mac16s(20, 20) == 3);  // 16×16, 16×4 and 4×16; 4×4 in LUTs
  CHECK(mac16s(33, 8) == 2);
  CHECK(mac16s(32, 32) == 4);
  CHECK(verilog::targets::ice40_hx8k.cost.dsps(16, 16) == 0);  // the HX8K has none
}

TEST_CASE("hardware cost: iCE40 memories go where yosys's memory_libmap costs put them", "[verilog][cost]") {
  const auto map_memory = verilog::mapping::map_memory_ice40;
  CHECK(map_memory(8, 133, true, false).logic_bits == 8 * 133);  // 1,064 bits: logic
  CHECK(map_memory(8, 134, true, false).block_rams == 1);        // 1,072: an SB_RAM40_4K
  CHECK(map_memory(1, 1071, true, false).logic_bits == 1071);
  CHECK(map_memory(1, 1072, true, false).block_rams == 1);
  CHECK(map_memory(32, 65, true, false).logic_bits == 32 * 65);  // two blocks from 2,112 bits
  CHECK(map_memory(32, 66, true, false).block_rams == 2);
  CHECK(map_memory(8, 8, false, false).logic_bits == 64);  // a RAM: 1 per bit in flip-flops
  CHECK(map_memory(8, 16, false, false).block_rams == 1);
  CHECK(map_memory(16, 257, true, false).block_rams == 2);
  // A table read without a clock (mase_lut's) is logic at any size.
  CHECK(map_memory(8, 256, true, true).logic_bits == 8 * 256);
}

TEST_CASE("hardware cost: cycles per sample equal Verilator's, DSPs and block RAMs equal yosys's", "[verilog][cost][tools]") {
  for (const cost_design& d : cost_designs()) {
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
    CHECK(model.resources.block_rams == static_cast<double>(yosys.block_ram_units()));
    CHECK(model.resources.lut_rams == static_cast<double>(yosys.lut_rams));
    CHECK(relative_error(model.resources.luts, static_cast<double>(yosys.luts)) <= 0.34);
    CHECK(relative_error(model.resources.flip_flops, static_cast<double>(yosys.flip_flops)) <= 0.34);
  }
}

// On the iCE40 UP5K the rules are synth_ice40's and the LUT4 and flip-flop fit its own.
TEST_CASE("hardware cost: on iCE40 UP5K, SB_MAC16s and SB_RAM40_4Ks equal yosys synth_ice40's", "[verilog][cost][tools]") {
  const verilog::target& up5k = verilog::targets::ice40_up5k;
  for (const cost_design& d : cost_designs()) {
    INFO(d.name);
    const auto hw = hardware_graph(d.g, d.config, d.parallelism);
    const verilog::hardware_cost model = verilog::estimate_hardware_cost(hw, up5k);
    CHECK(model.target == up5k.name);
    const fs::path dir = project_dir(fmt::format("hardware_cost_ice40_{}", d.name));
    (void)run(hw, emit_verilog({.project_dir = dir, .samples = 1}));
    const verilog::synthesis_report yosys = verilog::synthesize(dir, up5k);
    CHECK(model.resources.dsps == static_cast<double>(yosys.multipliers));
    CHECK(model.resources.block_rams == static_cast<double>(yosys.block_ram_units()));
    CHECK(model.resources.lut_rams == 0);
    CHECK(relative_error(model.resources.luts, static_cast<double>(yosys.luts)) <= 0.43);
    CHECK(relative_error(model.resources.flip_flops, static_cast<double>(yosys.flip_flops)) <= 0.37);
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
