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

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <random>
#include <string>

using namespace mase;
namespace fs = std::filesystem;

namespace {

format fixed(int width, int frac) { return format(fixed_fmt{.width = width, .frac = frac}); }

quantize_config widths(int data, int weight) {
  return {.by = quantize_by::type,
          .default_config = operand_formats{.data_in = fixed(data, data / 2), .weight = fixed(weight, weight - 1),
                                            .bias = fixed(weight, weight / 2), .data_out = fixed(data, data / 2)}};
}

// Parameters across the whole code range, as a trained network's (narrow weights drawn at their
// initial scale would quantize to zero, and yosys would fold their multipliers away).
graph full_range(graph g) {
  std::mt19937 random(5);
  std::uniform_real_distribution<float> symmetric(-1.0f, 1.0f);
  for (node_id id : g.order())
    for (auto& [role, values] : g[id].parameters)
      for (float& v : values.values()) v = role == "running_var" ? 0.5f + std::abs(symmetric(random)) : symmetric(random);
  return g;
}

graph small_mlp() {
  builder b(31);
  auto x = b.input("x", {1, 64});
  auto h = b.add("fc1", op::linear{.in_features = 64, .out_features = 32}, x);
  h = b.add("gelu", op::gelu{}, h);
  auto y = b.add("fc2", op::linear{.in_features = 32, .out_features = 10}, h);
  return b.output(y);
}

graph small_cnn() {
  builder b(32);
  auto x = b.input("x", {1, 2, 8, 8});
  auto h = b.add("conv1", op::conv2d{.in_channels = 2, .out_channels = 4, .kernel_size = {3}, .padding = {1}}, x);
  h = b.add("relu1", op::relu{}, h);
  h = b.add("pool1", op::max_pool2d{.kernel_size = {2}, .stride = {2}}, h);
  h = b.add("flatten", op::flatten{.start_dim = 1}, h);
  auto y = b.add("fc1", op::linear{.in_features = 64, .out_features = 10}, h);
  return b.output(y);
}

auto hardware_graph(const graph& g, const quantize_config& config, std::array<int, 4> parallelism) {
  return full_range(g) | init_metadata | add_common_metadata | quantize(config) |
         add_hardware_metadata({.max_parallelism = parallelism});
}

fs::path project_dir(const std::string& name) {
#ifdef MASE_TEST_OUTPUT_DIR
  return fs::path(MASE_TEST_OUTPUT_DIR) / "verilog" / name;
#else
  return fs::temp_directory_path() / ("mase_test_verilog_" + name);
#endif
}

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

TEST_CASE("hardware cost: cycles per sample equal Verilator's, DSPs and block RAMs equal yosys's", "[verilog][cost]") {
  struct design {
    std::string name;
    graph g;
    quantize_config config;
    std::array<int, 4> parallelism;
  };
  const design designs[] = {{"mlp_gelu", small_mlp(), widths(8, 8), {4, 4, 4, 4}},
                            {"mlp_narrow", small_mlp(), widths(4, 6), {8, 8, 8, 8}},
                            {"cnn", small_cnn(), widths(8, 6), {4, 4, 4, 4}}};
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
