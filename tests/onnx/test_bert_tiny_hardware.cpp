// bert-tiny (tests/fixtures/bert_tiny) from its ONNX file to proven RTL: imported, raised,
// quantized with fixed8.toml, emitted, linted, and simulated under random stalls on reference
// sequences, every output word equal to the bit-exact evaluator's: three sequences in Verilator,
// one in Icarus (a long test, run by hand). Then, without stalls, cycles per sequence in steady state against the ideal (the
// busiest component's multiply-accumulates over its multipliers) and the cost model's figure;
// prints the per-block table docs/hardware.md quotes.

#include <mase/io/npy.hpp>
#include <mase/io/onnx.hpp>
#include <mase/io/quant_config.hpp>
#include <mase/mase.hpp>
#include <mase/pass/raise_granularity.hpp>
#include <mase/verilog.hpp>

#include "../verilog/project_dir.hpp"

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>

namespace {

const std::filesystem::path bert_dir = std::filesystem::path(MASE_FIXTURE_DIR) / "bert_tiny";
constexpr std::int64_t sequence_length = 32;

// The first `count` reference sequences (lengths differ, so the mask matters).
mase::ordered_map<mase::tensor> reference_sequences(std::int64_t count) {
  mase::ordered_map<mase::tensor> inputs;
  for (const char* name : {"input_ids", "attention_mask"}) {
    const mase::tensor all = mase::npy::load(bert_dir / fmt::format("reference_{}.npy", name));
    REQUIRE(all.shape()[0] >= count);
    mase::tensor first(mase::shape{count, sequence_length});
    std::copy_n(all.values().begin(), first.size(), first.values().begin());
    inputs.insert_or_assign(name, std::move(first));
  }
  return inputs;
}

// Imported for `sequences` sequences: the export's reshapes take the batch from the input's shape,
// so the import folds it in.
auto bert_hardware(std::array<int, 4> parallelism, std::int64_t sequences) {
  mase::onnx::import_options options;
  options.data_shapes = {{"input_ids", {sequences, sequence_length}},
                         {"attention_mask", {sequences, sequence_length}}};
  mase::graph g = mase::onnx::load_model(bert_dir / "bert_tiny_opset17.onnx", options).graph;
  (void)mase::raise_granularity_of(g);
  return g | mase::init_metadata | mase::add_common_metadata |
         mase::quantize(mase::load_quantize_config(bert_dir / "fixed8.toml")) |
         mase::add_hardware_metadata({.max_parallelism = parallelism});
}

// Emits bert-tiny for the first `sequences` reference sequences and lints it.
auto emit_bert(const std::string& name, std::int64_t sequences) {
  const std::filesystem::path dir = mase_test_verilog::project_dir(name);
  auto [design, info] = mase::run(bert_hardware({4, 8, 4, 4}, sequences),
                                  mase::emit_verilog({.project_dir = dir, .inputs = reference_sequences(sequences)}));
  const mase::verilog::emit_info& emitted = std::get<0>(info);
  REQUIRE(emitted.outputs.size() == 1);
  CHECK(emitted.outputs[0].beats * emitted.outputs[0].lanes == sequences * 2);  // two logits per sequence
  CHECK(mase::verilog::lint(dir).empty());
  return std::pair{std::move(design), emitted};
}

}  // namespace

TEST_CASE("bert-tiny emitted as RTL matches the bit-exact evaluator word for word in Verilator, at its ideal pace",
          "[verilog][tools]") {
  constexpr std::int64_t sequences = 3;
  const auto [design, emitted] = emit_bert("bert_tiny", sequences);
  {
    const mase::verilog::simulation_result r = mase::verilog::simulate(emitted.project_dir, mase::verilog::simulator::verilator);
    INFO(r.log);
    CHECK(r.failed == 0);
    CHECK(r.passed == sequences * 2);
  }

  // Steady state: the busiest component sets the pace.
  const mase::verilog::simulation_result r =
      mase::verilog::simulate(emitted.project_dir, mase::verilog::simulator::verilator, {.stall_percent = 0});
  REQUIRE(r.ok());
  REQUIRE(r.steady_samples == sequences - 1);
  std::int64_t ideal = 0;
  std::string busiest;
  for (const mase::verilog::linear_cost& layer : emitted.linear_layers)
    if (layer.ideal_cycles() > ideal) ideal = layer.ideal_cycles(), busiest = layer.node;
  const mase::verilog::hardware_cost cost = mase::verilog::estimate_hardware_cost(design);
  fmt::print("bert-tiny at max_parallelism [4, 8, 4, 4]: {} multipliers; {:.0f} cycles per sequence in steady "
             "state, ideal {} ({}), ratio {:.3f}; cost model {} ({})\n",
             emitted.multipliers, r.cycles_per_sample(), ideal, busiest, r.cycles_per_sample() / static_cast<double>(ideal),
             cost.cycles_per_sample, cost.bottleneck);
  fmt::print("component                    module            cycles/sequence  DSPs  BRAM18  LUTRAM\n");
  for (const mase::verilog::component_cost& c : cost.components) {
    const auto resources = mase::verilog::mapping::resources_of({c}, mase::verilog::targets::xc7.cost);
    fmt::print("{:<28} {:<17} {:>15}  {:>4.0f}  {:>6.0f}  {:>6.0f}\n", c.node, c.module, c.cycles_per_sample,
               resources.dsps, resources.block_rams, resources.lut_rams);
  }
  CHECK(r.cycles_per_sample() <= 1.25 * static_cast<double>(ideal));
  CHECK(static_cast<double>(cost.cycles_per_sample) == Approx(r.cycles_per_sample()).epsilon(0.01));
}

// Icarus interprets the design event by event, about 200 cycles a second here: one sequence
// takes about a quarter of an hour, so the test is hidden from CTest (Catch's [.] tag); run it
// with `onnx_test_bert_tiny_hardware [icarus]`. Every component is simulated in Icarus by
// tests/verilog on its own.
TEST_CASE("bert-tiny emitted as RTL matches the bit-exact evaluator word for word in Icarus", "[.][icarus]") {
  const auto [design, emitted] = emit_bert("bert_tiny_icarus", 1);
  const mase::verilog::simulation_result r = mase::verilog::simulate(emitted.project_dir, mase::verilog::simulator::iverilog);
  INFO(r.log);
  CHECK(r.failed == 0);
  CHECK(r.passed == 2);
}
