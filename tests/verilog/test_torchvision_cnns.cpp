// torchvision's CNNs as hardware, proven word for word: each network is built with its torchvision
// structure (benchmarks/reference_models.hpp; tests/fixtures/torchvision_cnns/export_torchvision_cnns.py
// exports the originals to ONNX for `mase emit-verilog`), given random weights, quantized to 8-bit
// fixed point, emitted, linted, and simulated in Verilator under random valid/ready stalls; the
// testbench compares every output word with the bit-exact evaluator's. squeezenet1_1 runs one image
// in the default C x H x W stream order; resnet18, mobilenet_v2 and squeezenet1_1 run two images
// with channels-last streams, and again without stalls, for their cycles per image in steady state
// against the slowest layer's ideal (its multiply-accumulates over its multipliers).
// Minutes of simulation: the release preset runs these, the sanitize preset does not.

#include "../../benchmarks/reference_models.hpp"
#include "project_dir.hpp"

#include <mase/eval/evaluator.hpp>
#include <mase/pass/add_common_metadata.hpp>
#include <mase/pass/init_metadata.hpp>
#include <mase/pass/quantize.hpp>
#include <mase/verilog.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>

using namespace mase;

namespace {

format fixed(int width, int frac) { return format(fixed_fmt{.width = width, .frac = frac}); }

// Weights uniform in ±√(6 / fan-in) (He's bound: a relu network then keeps its activations' scale
// from layer to layer, so the 8-bit codes stay busy instead of decaying to zero or saturating),
// biases and batch norms' means in ±1/8, their scales and variances in [0.5, 1.5].
graph busy_weights(graph g, std::uint32_t seed) {
  std::mt19937 random(seed);
  for (node_id id : g.order())
    for (auto& [role, values] : g[id].parameters) {
      const shape& s = values.shape();
      const bool batch_norm_scale = role == "running_var" || (role == "weight" && s.rank == 1);
      const double bound = batch_norm_scale ? 0.5
                           : role == "weight" ? std::sqrt(6.0 / static_cast<double>(s.numel() / s[0]))
                                              : 0.125;
      std::uniform_real_distribution<float> draw(static_cast<float>(batch_norm_scale ? 1.0 - bound : -bound),
                                                 static_cast<float>(batch_norm_scale ? 1.0 + bound : bound));
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
          "[verilog][network][tools]") {
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

namespace {

// Emits `network` (3 x size x size images, random weights) for two images, lints it, simulates them
// under stalls (every word the bit-exact evaluator's) and again without, and checks the cycles per
// image in steady state against the slowest dot-product layer's ideal; prints the layers' ideals.
// Every map streams pixel by pixel (channels-last), each convolution keeping k rows of every
// channel, its lanes over output channels.
void prove_two_images(const std::string& name, const graph& network, std::int64_t size, std::size_t components) {
  const auto hardware = busy_weights(network, 7) | init_metadata | add_common_metadata | quantize(eight_bit()) |
                        add_hardware_metadata({.max_parallelism = {4, 4, 4, 4}, .channels_last = true});
  evaluator ev(hardware, eval_mode::bit_exact);
  const tensor images = reference_models::random_input({2, 3, size, size}, 11);
  const tensor scores = ev.run(images)[0];
  std::int64_t nonzero = 0;
  for (float v : scores.values()) nonzero += v != 0.0f;
  INFO("class scores: " << nonzero << " of " << scores.size() << " non-zero");
  CHECK(nonzero * 2 >= static_cast<std::int64_t>(scores.size()));  // the proof is worth its words when they vary

  const auto dir = mase_test_verilog::project_dir(name);
  const auto [design, info] = run(hardware, emit_verilog({.project_dir = dir, .inputs = {{"x", images}}}));
  const verilog::emit_info& emitted = std::get<0>(info);
  CHECK(emitted.components.size() == components);
  CHECK(verilog::lint(dir).empty());
  const verilog::simulation_result stalled = verilog::simulate(dir, verilog::simulator::verilator);
  INFO(stalled.log);
  CHECK(stalled.failed == 0);
  CHECK(stalled.passed == static_cast<std::int64_t>(scores.size()));

  std::int64_t ideal = 0;
  std::string slowest;
  for (const verilog::linear_cost& l : emitted.dot_product_layers) {
    std::printf("%s %s: %lld multiply-accumulates per image on %lld multipliers, ideal %lld cycles\n", name.c_str(),
                l.node.c_str(), static_cast<long long>(l.macs_per_sample), static_cast<long long>(l.multipliers),
                static_cast<long long>(l.ideal_cycles()));
    if (l.ideal_cycles() > ideal) {
      ideal = l.ideal_cycles();
      slowest = l.node;
    }
  }
  const verilog::simulation_result steady = verilog::simulate(dir, verilog::simulator::verilator, {.stall_percent = 0});
  INFO(steady.log);
  REQUIRE(steady.ok());
  const double ratio = steady.cycles_per_sample() / static_cast<double>(ideal);
  std::printf("%s: %lld cycles for two images with stalls; without stalls %lld cycles, %.0f per image in steady state, "
              "%.3fx the slowest layer's (%s) ideal %lld\n",
              name.c_str(), static_cast<long long>(stalled.cycles), static_cast<long long>(steady.cycles),
              steady.cycles_per_sample(), ratio, slowest.c_str(), static_cast<long long>(ideal));
  CHECK(ratio <= 1.25);
}

}  // namespace

// With channels-last streams (hardware_options::channels_last) every convolution keeps rows of every
// channel and its lanes are output channels. The same networks in C x H x W order (two-sample
// buffers for ordinary convolutions, lanes over output columns) ran at 2,359,296 and 409,600 cycles
// per image, also 1.000x their ideals (docs/hardware.md); squeezenet1_1 above keeps that order.

TEST_CASE("resnet18 at 32x32 with channels-last streams (residual blocks with 1x1 downsampling shortcuts, batch "
          "norms, max pool, global average pooling, each convolution buffering rows of every channel) matches "
          "the bit-exact evaluator on two images and keeps pace with its slowest layer",
          "[verilog][network][tools]") {
  // 20 convolutions, 20 batch norms, 17 relus, the max pool, 8 adds, the mean and the classifier.
  prove_two_images("resnet18_channels_last", reference_models::resnet18(1, 32), 32, 68);
}

TEST_CASE("mobilenet_v2 at 32x32 with channels-last streams (inverted residuals: depthwise convolutions, relu6, "
          "linear projections) matches the bit-exact evaluator on two images and keeps pace with its slowest layer",
          "[verilog][network][tools]") {
  // 52 convolutions, 52 batch norms, 35 relu6, 10 adds, the mean and the classifier.
  prove_two_images("mobilenet_v2_channels_last", reference_models::mobilenet_v2(1, 32, 10), 32, 151);
}

TEST_CASE("squeezenet1_1 at 96x96 with channels-last streams (cat along channels pixel by pixel) matches the "
          "bit-exact evaluator on two images and keeps pace with its slowest layer",
          "[verilog][network][tools]") {
  // 26 convolutions, 26 relus, 3 pools, 8 cats, the mean
  prove_two_images("squeezenet1_1_channels_last", reference_models::squeezenet1_1(1, 96, 10), 96, 64);
}
