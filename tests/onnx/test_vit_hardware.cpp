// A small torchvision ViT (tests/fixtures/vit) from its ONNX file to proven RTL: imported at batch
// 1, raised, its attention split into hardware ops, quantized with fixed8.toml, emitted, linted,
// and simulated under random stalls on reference images, every output word equal to the bit-exact
// evaluator's. Then, without stalls, cycles per image in steady state against the ideal (the
// busiest dot-product component's multiply-accumulates over its multipliers) and the cost model.

#include <mase/io/npy.hpp>
#include <mase/io/onnx.hpp>
#include <mase/io/quant_config.hpp>
#include <mase/mase.hpp>
#include <mase/pass/raise_granularity.hpp>
#include <mase/pass/split_attention.hpp>
#include <mase/verilog.hpp>

#include "../verilog/project_dir.hpp"

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <string>

namespace {

const std::filesystem::path vit_dir = std::filesystem::path(MASE_FIXTURE_DIR) / "vit";

// The first `count` reference images.
mase::ordered_map<mase::tensor> reference_images(std::int64_t count) {
  const mase::tensor all = mase::npy::load(vit_dir / "reference_images.npy");
  REQUIRE(all.shape()[0] >= count);
  mase::tensor first(mase::shape{count, 3, 48, 48});
  std::copy_n(all.values().begin(), first.size(), first.values().begin());
  mase::ordered_map<mase::tensor> inputs;
  inputs.insert_or_assign("x", std::move(first));
  return inputs;
}

mase::graph vit_graph() {
  mase::graph g = mase::onnx::load_model(vit_dir / "vit_opset17.onnx").graph;
  const mase::raise_granularity_info raised = mase::raise_granularity_of(g);
  CHECK(raised.count("scaled_dot_product_attention") == 2);
  CHECK(mase::split_attention_of(g).split.size() == 2);
  return g;
}

}  // namespace

TEST_CASE("split_attention computes the function scaled_dot_product_attention computed", "[verilog]") {
  mase::graph fused = mase::onnx::load_model(vit_dir / "vit_opset17.onnx").graph;
  (void)mase::raise_granularity_of(fused);
  const mase::graph split = vit_graph();
  const mase::tensor reference = mase::npy::load(vit_dir / "reference_logits.npy");
  const auto images = reference_images(4);
  for (const mase::graph* g : {static_cast<const mase::graph*>(&fused), &split}) {
    const auto model = *g | mase::init_metadata | mase::add_common_metadata;
    mase::evaluator ev(model);
    for (std::int64_t i = 0; i < 4; ++i) {
      mase::tensor one(mase::shape{1, 3, 48, 48});
      std::copy_n(images.at("x").values().begin() + i * one.size(), one.size(), one.values().begin());
      mase::ordered_map<mase::tensor> in;
      in.insert_or_assign("x", std::move(one));
      const mase::tensor logits = ev.run(in)[0];
      for (std::size_t k = 0; k < logits.size(); ++k)  // PyTorch's own logits, to float32 rounding
        CHECK(logits.values()[k] == Approx(reference.values()[static_cast<std::size_t>(i) * 10 + k]).margin(2e-5));
    }
  }
}

TEST_CASE("a torchvision ViT emitted as RTL matches the bit-exact evaluator word for word in Verilator, at its ideal "
          "pace",
          "[verilog][tools]") {
  constexpr std::int64_t images = 3;
  const auto design = vit_graph() | mase::init_metadata | mase::add_common_metadata |
                      mase::quantize(mase::load_quantize_config(vit_dir / "fixed8.toml")) |
                      mase::add_hardware_metadata({.max_parallelism = {4, 8, 4, 4}});
  const std::filesystem::path dir = mase_test_verilog::project_dir("vit");
  auto [emitted_design, info] = mase::run(design, mase::emit_verilog({.project_dir = dir, .inputs = reference_images(images)}));
  const mase::verilog::emit_info& emitted = std::get<0>(info);
  REQUIRE(emitted.outputs.size() == 1);
  CHECK(emitted.samples == images);
  CHECK(emitted.outputs[0].beats * emitted.outputs[0].lanes == images * 10);  // ten logits per image
  CHECK(mase::verilog::lint(dir).empty());
  {
    const mase::verilog::simulation_result r = mase::verilog::simulate(dir, mase::verilog::simulator::verilator);
    INFO(r.log);
    CHECK(r.failed == 0);
    CHECK(r.passed == images * 10);
  }

  const mase::verilog::simulation_result r =
      mase::verilog::simulate(dir, mase::verilog::simulator::verilator, {.stall_percent = 0});
  REQUIRE(r.ok());
  REQUIRE(r.steady_samples == images - 1);
  std::int64_t ideal = 0;
  std::string busiest;
  for (const mase::verilog::linear_cost& layer : emitted.dot_product_layers)
    if (layer.ideal_cycles() > ideal) ideal = layer.ideal_cycles(), busiest = layer.node;
  const mase::verilog::hardware_cost cost = mase::verilog::estimate_hardware_cost(emitted_design);
  fmt::print("ViT at max_parallelism [4, 8, 4, 4]: {} components, {} multipliers; {:.0f} cycles per image in steady "
             "state, ideal {} ({}), ratio {:.3f}; cost model {} ({})\n",
             emitted.components.size(), emitted.multipliers, r.cycles_per_sample(), ideal, busiest,
             r.cycles_per_sample() / static_cast<double>(ideal), cost.cycles_per_sample, cost.bottleneck);
  for (const mase::verilog::linear_cost& layer : emitted.dot_product_layers)
    fmt::print("  {:<64} {:>8} MACs {:>3} multipliers  ideal {:>7}\n", layer.node, layer.macs_per_sample,
               layer.multipliers, layer.ideal_cycles());
  CHECK(r.cycles_per_sample() <= 1.25 * static_cast<double>(ideal));
  CHECK(static_cast<double>(cost.cycles_per_sample) == Approx(r.cycles_per_sample()).epsilon(0.01));
}

TEST_CASE("a torchvision ViT emitted as RTL matches the bit-exact evaluator word for word in Icarus", "[.][icarus]") {
  const auto design = vit_graph() | mase::init_metadata | mase::add_common_metadata |
                      mase::quantize(mase::load_quantize_config(vit_dir / "fixed8.toml")) |
                      mase::add_hardware_metadata({.max_parallelism = {4, 8, 4, 4}});
  const std::filesystem::path dir = mase_test_verilog::project_dir("vit_icarus");
  const auto [emitted_design, info] = mase::run(design, mase::emit_verilog({.project_dir = dir, .inputs = reference_images(1)}));
  (void)emitted_design;
  const mase::verilog::simulation_result r = mase::verilog::simulate(dir, mase::verilog::simulator::iverilog);
  INFO(r.log);
  CHECK(r.failed == 0);
  CHECK(r.passed == 10);
}
