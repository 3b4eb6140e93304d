// torchvision's CNNs as hardware, proven word for word: each network is built with its torchvision
// structure (benchmarks/reference_models.hpp; tests/fixtures/torchvision_cnns/export_torchvision_cnns.py
// exports the originals to ONNX for `mase emit-verilog`), given random weights, quantized to 8-bit
// fixed point, emitted, linted, and simulated in Verilator on one 96 x 96 image under random
// valid/ready stalls; the testbench compares every output word with the bit-exact evaluator's.
// Minutes of simulation: the release preset runs these, the sanitize preset does not.

#include "../../benchmarks/reference_models.hpp"
#include "project_dir.hpp"

#include <mase/eval/evaluator.hpp>
#include <mase/pass/add_common_metadata.hpp>
#include <mase/pass/init_metadata.hpp>
#include <mase/pass/quantize.hpp>
#include <mase/verilog.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <random>

using namespace mase;

namespace {

format fixed(int width, int frac) { return format(fixed_fmt{.width = width, .frac = frac}); }

// Weights uniform in ±√(6 / fan-in) (He's bound: a relu network then keeps its activations' scale
// from layer to layer, so the 8-bit codes stay busy instead of decaying to zero or saturating),
// biases in ±1/8.
graph busy_weights(graph g, std::uint32_t seed) {
  std::mt19937 random(seed);
  for (node_id id : g.order())
    for (auto& [role, values] : g[id].parameters) {
      const shape& s = values.shape();
      const double bound = role == "weight" ? std::sqrt(6.0 / static_cast<double>(s.numel() / s[0])) : 0.125;
      std::uniform_real_distribution<float> draw(static_cast<float>(-bound), static_cast<float>(bound));
      for (float& v : values.values()) v = draw(random);
    }
  return g;
}

// 8-bit activations with 4 fraction bits, 8-bit weights with 7, biases with 6.
quantize_config eight_bit() {
  return {.by = quantize_by::type,
          .default_config = operand_formats{.data_in = fixed(8, 4), .weight = fixed(8, 7), .bias = fixed(8, 6),
                                            .data_out = fixed(8, 4)},
          .hardware_formats = true};
}

}  // namespace

TEST_CASE("squeezenet1_1 at 96x96 (Fire modules: cat of two expands, ceil_mode max pools, global average "
          "pooling) matches the bit-exact evaluator word for word in Verilator",
          "[verilog][network]") {
  const graph g = busy_weights(reference_models::squeezenet1_1(1, 96, 10), 7);
  const auto hardware = g | init_metadata | add_common_metadata | quantize(eight_bit()) |
                        add_hardware_metadata({.max_parallelism = {4, 4, 4, 4}});
  // The proof is only worth its words if they vary: the class scores of one image.
  evaluator ev(hardware, eval_mode::bit_exact);
  const tensor image = reference_models::random_input({1, 3, 96, 96}, 11);
  const tensor scores = ev.run(image)[0];
  std::int64_t nonzero = 0;
  for (float v : scores.values()) nonzero += v != 0.0f;
  INFO("class scores: " << nonzero << " of " << scores.size() << " non-zero");
  CHECK(nonzero >= 5);

  const auto dir = mase_test_verilog::project_dir("squeezenet1_1");
  const auto [design, info] = run(hardware, emit_verilog({.project_dir = dir, .inputs = {{"x", image}}}));
  const verilog::emit_info& emitted = std::get<0>(info);
  CHECK(verilog::lint(dir).empty());
  const verilog::simulation_result r = verilog::simulate(dir, verilog::simulator::verilator);
  INFO(r.log);
  CHECK(r.failed == 0);
  CHECK(r.passed == static_cast<std::int64_t>(scores.size()));
  CHECK(emitted.components.size() == 64);  // as torchvision's export: 26 convs, 26 relus, 3 pools, 8 cats, the mean
}
