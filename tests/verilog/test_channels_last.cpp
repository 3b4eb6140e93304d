// Channels-last hardware (hardware_options::channels_last): every [N, C, H, W] map streams pixel
// by pixel, so a convolution keeps k rows of every channel (mase_pixel_sweep) instead of two whole
// samples, and its lanes are output channels. Each design is emitted, linted, and simulated in
// Verilator and Icarus under random stalls; every output word must equal the bit-exact
// evaluator's (the testbench reorders the evaluator's maps pixel by pixel).

#include <mase/ir/builder.hpp>
#include <mase/pass/add_common_metadata.hpp>
#include <mase/pass/init_metadata.hpp>
#include <mase/pass/quantize.hpp>
#include <mase/verilog.hpp>

#include "project_dir.hpp"
#include "prove_design.hpp"

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <map>
#include <string>
#include <vector>

using namespace mase;
namespace fs = std::filesystem;

namespace {

format fixed(int width, int frac) { return format(fixed_fmt{.width = width, .frac = frac}); }

quantize_config eight_bit() {
  quantize_config c{.by = quantize_by::type,
                    .default_config = operand_formats{.data_in = fixed(8, 4), .weight = fixed(8, 6), .bias = fixed(8, 5),
                                                      .data_out = fixed(8, 4)}};
  c.hardware_formats = true;  // an average pool of any divisor keeps its input's format, as mase emit-verilog sets
  return c;
}

auto hardware_graph(const graph& g, std::array<int, 4> parallelism) {
  return g | init_metadata | add_common_metadata | quantize(eight_bit()) |
         add_hardware_metadata({.max_parallelism = parallelism, .channels_last = true});
}

verilog::emit_info prove(const graph& g, const std::string& name, std::array<int, 4> parallelism) {
  return mase_test_verilog::prove_design(hardware_graph(g, parallelism), name, {}, 4, 5);
}

// A ResNet basic block and its stem: a padded strided 3x3 convolution, batch norm, relu, a padded
// max pool, two 3x3 convolutions beside the skip path, the residual add, a grouped 3x3
// convolution (two groups of 3 channels), global average pooling (36 pixels: no power of two),
// flatten and a classifier.
graph residual_block() {
  builder b(41);
  auto x = b.input("x", {1, 3, 13, 12});
  auto h = b.add("stem", op::conv2d{.in_channels = 3, .out_channels = 6, .kernel_size = {3}, .stride = {2},
                                    .padding = {1}, .bias = false},
                 x);  // 7x6
  h = b.add("stem_bn", op::batch_norm2d{.num_features = 6}, h);
  h = b.add("stem_relu", op::relu{}, h);
  h = b.add("pool", op::max_pool2d{.kernel_size = {3}, .stride = {1}, .padding = {1}}, h);  // 7x6
  auto branch = b.add("conv1", op::conv2d{.in_channels = 6, .out_channels = 6, .kernel_size = {3}, .padding = {1}}, h);
  branch = b.add("relu1", op::relu{}, branch);
  branch = b.add("conv2", op::conv2d{.in_channels = 6, .out_channels = 6, .kernel_size = {3}, .padding = {1}}, branch);
  h = b.add("residual", op::add{}, h, branch);
  h = b.add("grouped", op::conv2d{.in_channels = 6, .out_channels = 4, .kernel_size = {3}, .padding = {1},
                                  .dilation = {1}, .groups = 2},
            h);
  h = b.add("gap", op::adaptive_avg_pool2d{.output_size = {1}}, b.add("relu2", op::relu{}, h));
  h = b.add("flatten", op::flatten{.start_dim = 1}, h);
  graph g = b.output(b.add("fc", op::linear{.in_features = 4, .out_features = 5}, h));
  g.parameter("stem_bn.weight") = tensor({6}, {1.25f, -0.5f, 2.0f, 0.75f, 1.0f, -1.5f});
  g.parameter("stem_bn.bias") = tensor({6}, {0.25f, 0.5f, -0.75f, 0.0f, 0.125f, -0.25f});
  g.parameter("stem_bn.running_mean") = tensor({6}, {0.1f, -0.2f, 0.3f, 0.0f, -0.1f, 0.2f});
  g.parameter("stem_bn.running_var") = tensor({6}, {0.8f, 1.5f, 0.6f, 1.0f, 1.2f, 0.9f});
  return g;
}

// MobileNet's inverted residual and SqueezeNet's Fire module: a 1x1 expansion, a depthwise 3x3
// (stride 2, then dilation 2 with padding 2), relu6, MobileNetV3's squeeze-excitation (global
// mean, 1x1 reduce, relu, 1x1 expand, hardsigmoid, the [N, C, 1, 1] scale broadcast over the map),
// a 1x1 projection, a constant map added; a Fire module's cat of a 1x1 and a 3x3 expand along the
// channels, a ceil_mode max pool, a padded average pool of 9, and the map itself as a second output
// (channels-last at the port).
graph inverted_residual_and_fire() {
  builder b(42);
  auto x = b.input("x", {1, 4, 9, 10});
  auto h = b.add("expand", op::conv2d{.in_channels = 4, .out_channels = 8, .kernel_size = {1}}, x);
  h = b.add("relu6_a", op::hardtanh{.min_val = 0.0, .max_val = 6.0}, h);
  h = b.add("depthwise", op::conv2d{.in_channels = 8, .out_channels = 8, .kernel_size = {3}, .stride = {2},
                                    .padding = {1}, .groups = 8},
            h);  // 5x5
  h = b.add("relu6_b", op::hardtanh{.min_val = 0.0, .max_val = 6.0}, h);
  auto dilated = b.add("dilated", op::conv2d{.in_channels = 8, .out_channels = 8, .kernel_size = {3}, .padding = {2},
                                             .dilation = {2}, .groups = 8, .bias = false},
                       h);
  h = b.add("skip", op::add{}, h, dilated);
  auto scale = b.add("squeeze", op::adaptive_avg_pool2d{.output_size = {1}}, h);
  scale = b.add("reduce", op::conv2d{.in_channels = 8, .out_channels = 4, .kernel_size = {1}}, scale);
  scale = b.add("se_relu", op::relu{}, scale);
  scale = b.add("expand_scale", op::conv2d{.in_channels = 4, .out_channels = 8, .kernel_size = {1}}, scale);
  scale = b.add("gate", op::hardsigmoid{}, scale);
  h = b.add("excite", op::mul{}, h, scale);
  h = b.add("project", op::conv2d{.in_channels = 8, .out_channels = 4, .kernel_size = {1}}, h);
  auto offsets = b.add("offsets", op::constant{.shape = {1, 4, 5, 5}});
  std::vector<float> offset_values(4 * 5 * 5);
  for (std::size_t i = 0; i < offset_values.size(); ++i) offset_values[i] = static_cast<float>(i % 7) / 8.0f - 0.375f;
  b.set_parameter(offsets, "value", tensor({1, 4, 5, 5}, offset_values));
  h = b.add("offset", op::add{}, h, offsets);
  auto e1 = b.add("fire_1x1", op::conv2d{.in_channels = 4, .out_channels = 4, .kernel_size = {1}}, h);
  auto e3 = b.add("fire_3x3", op::conv2d{.in_channels = 4, .out_channels = 2, .kernel_size = {3}, .padding = {1}}, h);
  h = b.add("fire", op::cat{.dim = 1}, b.add("fire_relu1", op::relu{}, e1), b.add("fire_relu3", op::relu{}, e3));
  h = b.add("max_ceil", op::max_pool2d{.kernel_size = {2}, .stride = {2}, .ceil_mode = true}, h);  // 5x5 -> 3x3
  auto smooth = b.add("avg_of_9", op::avg_pool2d{.kernel_size = {3}, .stride = {1}, .padding = {1}}, h);
  return b.output(smooth, h);
}

}  // namespace

TEST_CASE("emit_verilog with channels_last: a ResNet stem and basic block, a grouped convolution and global "
          "average pooling match at two parallelism settings, on rows of every channel",
          "[verilog][tools]") {
  for (const auto& [name, parallelism] : {std::pair{std::string("channels_last_resnet_1"), std::array{1, 1, 1, 1}},
                                          std::pair{std::string("channels_last_resnet_3"), std::array{3, 3, 3, 3}}}) {
    const auto hw = hardware_graph(residual_block(), parallelism);
    // Each window component keeps one ring of (k - 1) * d + 1 + s rows of W pixels of every
    // channel, shared by its lanes: k.W.C elements, not H.W.C.
    const std::map<std::string, std::array<std::int64_t, 3>> ring{// rows, columns, channels
                                                                  {"stem", {5, 12, 3}},
                                                                  {"pool", {4, 6, 6}},
                                                                  {"conv1", {4, 6, 6}},
                                                                  {"conv2", {4, 6, 6}},
                                                                  {"grouped", {4, 6, 6}}};
    const verilog::hardware_cost cost = verilog::estimate_hardware_cost(hw);
    for (const verilog::component_cost& c : cost.components) {
      if (!ring.contains(c.node)) continue;
      INFO(c.node);
      REQUIRE(!c.memories.empty());
      const verilog::memory_use& buffer = c.memories.front();
      CHECK(buffer.what == "line buffer");
      CHECK(buffer.copies == 1);
      const std::int64_t lanes_in = verilog::detail::param_int(graph(hw).at(c.node), "DATA_IN_0_PARALLELISM_DIM_0");
      const auto [rows, cols, channels] = ring.at(c.node);
      CHECK(buffer.depth * lanes_in == rows * cols * channels);
      CHECK(buffer.width == lanes_in * 8);
    }
    // Lanes over output channels: a beat of the grouped convolution stays in one group of 2.
    CHECK(verilog::detail::param_int(graph(hw).at("grouped"), "DATA_OUT_0_PARALLELISM_DIM_0") ==
          (parallelism[0] == 1 ? 1 : 2));
    prove(residual_block(), name, parallelism);
  }
}

TEST_CASE("emit_verilog with channels_last: an inverted residual (1x1, depthwise, relu6, squeeze-excitation, 1x1, "
          "a constant map) and a Fire module (cat along channels, ceil_mode and average pools) match at two "
          "parallelism settings",
          "[verilog][tools]") {
  prove(inverted_residual_and_fire(), "channels_last_mobile_1", {1, 1, 1, 1});
  const verilog::emit_info wide = prove(inverted_residual_and_fire(), "channels_last_mobile_4", {4, 4, 4, 4});
  // The depthwise windows read a beat's own channels: the input is converted to their 4 lanes
  // where the producer's differ (the Fire module's cat streams 2 lanes: gcd(4, 2)).
  CHECK(wide.lane_converters >= 1);
}

TEST_CASE("emit_verilog with channels_last: a convolution keeps pace with its ideal cycles in steady state",
          "[verilog][tools]") {
  // A 3x3 conv of 6 channels to 6 on 7x6 pixels, 3 output channels a beat: 7*6 pixels * 2 beats *
  // 54 taps = 4536 cycles a sample (the pool after it takes 8*7*2*4 = 448). Without stalls the
  // steady state must be exactly that: the ring never makes the sweep wait.
  builder b(43);
  auto x = b.input("x", {1, 6, 7, 6});
  auto h = b.add("conv", op::conv2d{.in_channels = 6, .out_channels = 6, .kernel_size = {3}, .padding = {1}}, x);
  h = b.add("pool", op::max_pool2d{.kernel_size = {2}, .stride = {1}, .padding = {1}}, b.add("relu", op::relu{}, h));
  const auto hw = hardware_graph(b.output(h), {3, 3, 3, 3});
  const fs::path dir = mase_test_verilog::project_dir("channels_last_pace");
  const auto [design, info] = run(hw, emit_verilog({.project_dir = dir, .samples = 4, .seed = 7}));
  (void)info;
  const verilog::simulation_result r = verilog::simulate(dir, verilog::simulator::verilator, {.stall_percent = 0});
  INFO(r.log);
  REQUIRE(r.ok());
  CHECK(r.cycles_per_sample() == 7.0 * 6 * 2 * 54);
  CHECK(verilog::estimate_hardware_cost(hw).cycles_per_sample == 7 * 6 * 2 * 54);
}

TEST_CASE("add_hardware_metadata with channels_last: a reshape of a map of several pixels and a permute of one "
          "are refused, naming the node",
          "[verilog]") {
  {
    builder b(44);
    auto x = b.input("x", {1, 2, 4, 4});
    auto h = b.add("conv", op::conv2d{.in_channels = 2, .out_channels = 2, .kernel_size = {3}, .padding = {1}}, x);
    h = b.add("flatten", op::flatten{.start_dim = 1}, h);
    const graph g = b.output(b.add("fc", op::linear{.in_features = 32, .out_features = 3}, h));
    CHECK_THROWS_WITH(hardware_graph(g, {2, 2, 2, 2}),
                      Catch::Contains("node flatten (flatten) reshapes the channels-last map") &&
                          Catch::Contains("pool it to one pixel first"));
  }
  {
    // A transpose of the map's rows and columns (mase_permute reorders by PyTorch's layout).
    builder b(45);
    auto x = b.input("x", {1, 2, 4, 4});
    auto h = b.add("conv", op::conv2d{.in_channels = 2, .out_channels = 2, .kernel_size = {1}}, x);
    const graph g = b.output(b.add("transpose", op::permute{.dims = {0, 1, 3, 2}}, h));
    CHECK_THROWS_WITH(hardware_graph(g, {2, 2, 2, 2}),
                      Catch::Contains("node transpose (permute) (mase_permute) takes or gives a rank-4 stream") &&
                          Catch::Contains("without channels_last"));
  }
}
