// Emitted hardware against the bit-exact evaluator: each design is emitted, linted with
// `verilator --lint-only -Wall`, and simulated with Verilator (its C++ model, built here) and
// Icarus Verilog under random valid/ready stalls; the testbench compares every output word with
// the evaluator's. An MLP, a CNN (conv, relu, pool, flatten, linear) and a transformer
// feed-forward block (linear, gelu, linear, residual add), each at two parallelism settings.

#include <mase/core/project_folder.hpp>
#include <mase/ir/builder.hpp>
#include <mase/pass/add_common_metadata.hpp>
#include <mase/pass/init_metadata.hpp>
#include <mase/pass/quantize.hpp>
#include <mase/verilog.hpp>

#include "hardware_designs.hpp"
#include "project_dir.hpp"
#include "prove_design.hpp"

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <random>
#include <string>

using namespace mase;
namespace fs = std::filesystem;

namespace {

format fixed(int width, int frac) { return format(fixed_fmt{.width = width, .frac = frac}); }

// Every quantizable node: 8-bit inputs and results, 8-bit weights and biases.
quantize_config eight_bit() {
  return {.by = quantize_by::type,
          .default_config = operand_formats{.data_in = fixed(8, 4), .weight = fixed(8, 6), .bias = fixed(8, 5),
                                            .data_out = fixed(8, 4)}};
}

graph mlp() {
  builder b(11);
  auto x = b.input("x", {1, 48});
  auto h = b.add("fc1", op::linear{.in_features = 48, .out_features = 16}, x);
  h = b.add("relu1", op::relu{}, h);
  auto y = b.add("fc2", op::linear{.in_features = 16, .out_features = 10}, h);
  return b.output(y);
}

graph cnn() {
  builder b(12);
  auto x = b.input("x", {1, 1, 8, 8});
  auto h = b.add("conv1", op::conv2d{.in_channels = 1, .out_channels = 4, .kernel_size = {3}, .padding = {1}}, x);
  h = b.add("relu1", op::relu{}, h);
  h = b.add("pool1", op::max_pool2d{.kernel_size = {2}, .stride = {2}}, h);
  h = b.add("flatten", op::flatten{.start_dim = 1}, h);
  auto y = b.add("fc1", op::linear{.in_features = 64, .out_features = 10}, h);
  return b.output(y);
}

graph feed_forward() {
  builder b(13);
  auto x = b.input("x", {1, 16});
  auto h = b.add("fc1", op::linear{.in_features = 16, .out_features = 32}, x);
  h = b.add("gelu", op::gelu{}, h);
  h = b.add("fc2", op::linear{.in_features = 32, .out_features = 16}, h);
  auto y = b.add("residual", op::add{}, x, h);
  return b.output(y);
}

// A residual block: the skip path joins two 3x3 convolutions, each waiting for a whole sample.
graph conv_residual() {
  builder b(16);
  auto x = b.input("x", {1, 3, 5, 6});
  auto h = b.add("conv1", op::conv2d{.in_channels = 3, .out_channels = 3, .kernel_size = {3}, .padding = {1}}, x);
  h = b.add("relu1", op::relu{}, h);
  h = b.add("conv2", op::conv2d{.in_channels = 3, .out_channels = 3, .kernel_size = {3}, .padding = {1}}, h);
  return b.output(b.add("residual", op::add{}, x, h));
}

// MASE's JSC-Toy (machop's jet-substructure models): BatchNorm1d on the 16 features, then three
// Linear layers, a BatchNorm1d and a ReLU after each; every parameter and statistic drawn.
graph jsc_toy() {
  builder b(17);
  auto h = b.input("x", {1, 16});
  h = b.add("relu0", op::relu{}, b.add("bn0", op::batch_norm1d{.num_features = 16}, h));
  const std::array<std::int64_t, 4> sizes{16, 8, 8, 5};
  for (std::size_t i = 1; i < sizes.size(); ++i) {
    h = b.add(fmt::format("fc{}", i), op::linear{.in_features = sizes[i - 1], .out_features = sizes[i]}, h);
    h = b.add(fmt::format("bn{}", i), op::batch_norm1d{.num_features = sizes[i]}, h);
    h = b.add(fmt::format("relu{}", i), op::relu{}, h);
  }
  return mase_hardware_designs::full_range_parameters(b.output(h), 18);
}

// A batch norm over [N, C, L] (a channel's L elements stream together), flattened into a linear.
graph batch_norm_over_length() {
  builder b(19);
  auto h = b.add("bn", op::batch_norm1d{.num_features = 3}, b.input("x", {1, 3, 4}));
  h = b.add("flatten", op::flatten{.start_dim = 1}, b.add("relu", op::relu{}, h));
  return mase_hardware_designs::full_range_parameters(
      b.output(b.add("fc", op::linear{.in_features = 12, .out_features = 4}, h)), 20);
}

// conv, batch norm (per-channel scale and shift), relu, average pool (its exact mean is 2 bits
// wider; the linear reads it through a cast), flatten, linear.
graph cnn_batch_norm_average() {
  builder b(15);
  auto x = b.input("x", {1, 2, 8, 8});
  auto h = b.add("conv1", op::conv2d{.in_channels = 2, .out_channels = 3, .kernel_size = {3}, .stride = {1},
                                     .padding = {1}, .bias = false},
                 x);
  h = b.add("bn1", op::batch_norm2d{.num_features = 3}, h);
  h = b.add("relu1", op::relu{}, h);
  h = b.add("pool1", op::avg_pool2d{.kernel_size = {2}, .stride = {2}}, h);
  h = b.add("flatten", op::flatten{.start_dim = 1}, h);
  auto y = b.add("fc1", op::linear{.in_features = 48, .out_features = 6}, h);
  graph g = b.output(y);
  g.parameter("bn1.weight") = tensor({3}, {1.25f, -0.5f, 2.0f});
  g.parameter("bn1.bias") = tensor({3}, {0.25f, 0.5f, -0.75f});
  g.parameter("bn1.running_mean") = tensor({3}, {0.1f, -0.2f, 0.3f});
  g.parameter("bn1.running_var") = tensor({3}, {0.8f, 1.5f, 0.6f});
  return g;
}

// Global average pooling as torchvision's networks end: conv, relu, the mean over H and W (36
// values, no power of two: the constant-reciprocal divide), flatten, linear; and the adaptive
// pool to size 1 on a second branch.
graph global_average() {
  builder b(24);
  auto x = b.input("x", {1, 3, 6, 6});
  auto h = b.add("conv1", op::conv2d{.in_channels = 3, .out_channels = 5, .kernel_size = {3}, .padding = {1}}, x);
  h = b.add("relu1", op::relu{}, h);
  auto mean = b.add("gap", op::mean{.dim = {2, 3}, .keepdim = true}, h);
  mean = b.add("flatten", op::flatten{.start_dim = 1}, mean);
  auto y = b.add("fc1", op::linear{.in_features = 5, .out_features = 4}, mean);
  auto pooled = b.add("pool", op::adaptive_avg_pool2d{.output_size = {1}}, h);
  return b.output(y, pooled);
}

// The pools of squeezenet and of inception-style blocks: a max pool whose ceil_mode windows overhang
// the input, an average pool of 3x3 windows with their padding counted (divisor 9, no power of
// two), flatten, linear; and on a second branch a 2x2 average with a divisor_override of 3.
graph odd_pools() {
  builder b(26);
  auto x = b.input("x", {1, 2, 8, 8});
  auto h = b.add("conv1", op::conv2d{.in_channels = 2, .out_channels = 3, .kernel_size = {3}, .padding = {1}}, x);
  h = b.add("relu1", op::relu{}, h);
  h = b.add("max_ceil", op::max_pool2d{.kernel_size = {3}, .stride = {2}, .ceil_mode = true}, h);  // 8x8 -> 4x4
  auto smooth = b.add("avg_of_9", op::avg_pool2d{.kernel_size = {3}, .stride = {1}, .padding = {1}}, h);
  smooth = b.add("flatten", op::flatten{.start_dim = 1}, smooth);
  auto y = b.add("fc1", op::linear{.in_features = 48, .out_features = 6}, smooth);
  auto third = b.add("avg_over_3", op::avg_pool2d{.kernel_size = {2}, .stride = {2}, .divisor_override = 3}, h);
  return b.output(y, third);
}

// Windows over one channel each, which the line-buffered sweep serves: depthwise convolutions
// (stride 1 and 2, padding, dilation 2), a padded max pool with dilation, and a fork whose skip
// branch joins a depthwise branch (FIFO sizing counts the ring's rows).
graph depthwise_windows() {
  builder b(27);
  auto x = b.input("x", {1, 3, 9, 10});
  auto h = b.add("dw1", op::conv2d{.in_channels = 3, .out_channels = 3, .kernel_size = {3}, .padding = {1},
                                   .groups = 3},
                 x);
  h = b.add("relu1", op::relu{}, h);
  auto d = b.add("dw2", op::conv2d{.in_channels = 3, .out_channels = 3, .kernel_size = {3}, .padding = {2},
                                   .dilation = {2}, .groups = 3, .bias = false},
                 h);
  h = b.add("skip_add", op::add{}, h, d);
  h = b.add("dw_stride", op::conv2d{.in_channels = 3, .out_channels = 3, .kernel_size = {3}, .stride = {2},
                                        .padding = {1}, .groups = 3},
            h);  // 9x10 -> 5x5
  h = b.add("pool", op::max_pool2d{.kernel_size = {2}, .stride = {1}, .padding = {1}, .dilation = {2}}, h);  // 5x5
  h = b.add("flatten", op::flatten{.start_dim = 1}, h);
  return b.output(b.add("fc1", op::linear{.in_features = 75, .out_features = 5}, h));
}

// A pool reading a cat whose beats straddle rows (4 lanes over rows of 11): the pool's ring takes
// whole rows a beat, so a lane converter narrows its input to 1 lane (squeezenet's Fire modules).
graph cat_then_pool() {
  builder b(28);
  auto x = b.input("x", {1, 3, 11, 11});
  auto e1 = b.add("expand1x1", op::conv2d{.in_channels = 3, .out_channels = 4, .kernel_size = {1}}, x);
  auto e3 = b.add("expand3x3", op::conv2d{.in_channels = 3, .out_channels = 4, .kernel_size = {3}, .padding = {1}}, x);
  auto h = b.add("fire", op::cat{.dim = 1}, b.add("relu1", op::relu{}, e1), b.add("relu3", op::relu{}, e3));
  h = b.add("pool", op::max_pool2d{.kernel_size = {3}, .stride = {2}, .ceil_mode = true}, h);  // 11x11 -> 5x5
  h = b.add("flatten", op::flatten{.start_dim = 1}, h);
  return b.output(b.add("fc1", op::linear{.in_features = 200, .out_features = 5}, h));
}

// eight_bit with the hardware's defaults for results the config leaves float (what mase
// emit-verilog sets): an average pool of any divisor takes its input's format.
quantize_config eight_bit_for_hardware() {
  quantize_config c = eight_bit();
  c.hardware_formats = true;
  return c;
}

// Every lookup-table activation, a fork and an element-wise product.
graph activations() {
  builder b(16);
  auto x = b.input("x", {1, 12});
  auto h = b.add("fc1", op::linear{.in_features = 12, .out_features = 12}, x);
  auto gate = b.add("sigmoid", op::sigmoid{}, h);
  auto value = b.add("tanh", op::tanh{}, h);
  h = b.add("product", op::mul{}, gate, value);
  h = b.add("leaky", op::leaky_relu{.negative_slope = 0.125}, h);
  h = b.add("silu", op::silu{}, h);
  h = b.add("elu", op::elu{}, h);
  h = b.add("softplus", op::softplus{}, h);
  h = b.add("softsign", op::softsign{}, h);
  h = b.add("hardswish", op::hardswish{}, h);
  auto y = b.add("fc2", op::linear{.in_features = 12, .out_features = 4}, h);
  return b.output(y);
}

// Attention scores without the softmax: projected queries times a second input stream of keys
// (already transposed): the matmul of two streams, and a design with two inputs.
graph query_key_scores() {
  builder b(17);
  auto x = b.input("x", {1, 6, 16});
  auto keys = b.input("keys", {1, 16, 8});
  auto q = b.add("q_proj", op::linear{.in_features = 16, .out_features = 16}, x);
  auto scores = b.add("scores", op::matmul{}, q, keys);
  return b.output(scores);
}

// Attention probabilities: the scores above through a softmax over each row of 8.
graph attention_probabilities() {
  builder b(18);
  auto x = b.input("x", {1, 6, 16});
  auto keys = b.input("keys", {1, 16, 8});
  auto q = b.add("q_proj", op::linear{.in_features = 16, .out_features = 16}, x);
  auto scores = b.add("scores", op::matmul{}, q, keys);
  auto p = b.add("softmax", op::softmax{.dim = -1}, scores);
  return b.output(p);
}

// A projection, a layer norm over rows of 16 (weight and bias), a second projection and an RMS
// norm without affine parameters: the two normalizations of transformers.
graph normalizations() {
  builder b(19);
  auto x = b.input("x", {1, 4, 16});
  auto h = b.add("proj", op::linear{.in_features = 16, .out_features = 16}, x);
  h = b.add("norm", op::layer_norm{.normalized_shape = {16}}, h);
  h = b.add("proj2", op::linear{.in_features = 16, .out_features = 8}, h);
  auto y = b.add("rms", op::rms_norm{.normalized_shape = {8}, .elementwise_affine = false}, h);
  graph g = b.output(y);
  // PyTorch initialises weight 1 and bias 0; these make every lane's scale and shift differ.
  tensor weight({16}), bias({16});
  for (int i = 0; i < 16; ++i) {
    weight.values()[static_cast<std::size_t>(i)] = 0.2f * static_cast<float>(i) - 1.5f;
    bias.values()[static_cast<std::size_t>(i)] = 0.0625f * static_cast<float>(i % 7) - 0.1875f;
  }
  g.parameter("norm.weight") = weight;
  g.parameter("norm.bias") = bias;
  return g;
}

// A constant of the given shape, values drawn uniformly from [-1, 1).
node_id random_constant(builder& b, const std::string& name, const shape& s, std::uint32_t seed) {
  std::mt19937 random(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  tensor t(s);
  for (float& v : t.values()) v = uniform(random);
  dims size;
  for (std::int64_t d : s) size.push_back(d);
  auto c = b.add(name, op::constant{.shape = size});
  b.set_parameter(c, "value", std::move(t));
  return c;
}

// BERT's embeddings and head around a layer norm: token ids through a word table (a ROM), a
// position table added (a constant operand), the [CLS] row gathered (index_select by a constant
// index), a linear.
graph embeddings_and_head() {
  builder b(20);
  auto ids = b.input("ids", {1, 8});
  auto words = b.add("word", op::embedding{.num_embeddings = 24, .embedding_dim = 16}, ids);
  auto h = b.add("add_position", op::add{}, words, random_constant(b, "position", {1, 8, 16}, 5));
  h = b.add("norm", op::layer_norm{.normalized_shape = {16}}, h);
  auto cls = b.add("cls_index", op::constant{});
  b.set_parameter(cls, "value", tensor(shape{}, {0.0f}));
  h = b.add("cls", op::index_select{.dim = 1}, h, cls);
  return b.output(b.add("head", op::linear{.in_features = 16, .out_features = 4}, h));
}

// Token ids for embeddings_and_head: every row of the table, in a shuffled order.
ordered_map<tensor> token_ids(std::int64_t samples) {
  tensor ids({samples, 8});
  for (std::size_t i = 0; i < ids.size(); ++i) ids.values()[i] = static_cast<float>((i * 7 + 3) % 24);
  return {{"ids", ids}};
}

// BERT's additive attention mask: the mask [batch, 8] unsqueezed to [batch, 1, 1, 8], (1 − mask) ·
// −10000 (constant operands on either side), broadcast over two heads' rows of scores, softmax.
graph masked_softmax() {
  builder b(22);
  auto scores = b.input("scores", {1, 2, 8, 8});
  auto mask = b.input("mask", {1, 8});
  auto m = b.add("mask_1", op::unsqueeze{.dim = 1}, mask);
  m = b.add("mask_2", op::unsqueeze{.dim = 2}, m);
  auto one = b.add("one", op::constant{});
  b.set_parameter(one, "value", tensor(shape{}, {1.0f}));
  auto large = b.add("large", op::constant{});
  b.set_parameter(large, "value", tensor(shape{}, {-10000.0f}));
  m = b.add("inverted", op::sub{}, one, m);
  m = b.add("additive", op::mul{}, m, large);
  auto h = b.add("masked", op::add{}, scores, m);
  return b.output(b.add("softmax", op::softmax{.dim = -1}, h));
}

// A ViT's front and nn.MultiheadAttention's layout at batch 1: a class token (a constant) joined
// before the patches, the batch of 1 swapped with the sequence (wired through), a packed
// projection sliced (a strided slice too), a head split whose permute crosses the leading
// dimension (at batch 1 the whole tensor is one sample), and two streams of one fork joined
// along the features.
graph class_token_and_packed_heads() {
  builder b(23);
  auto patches = b.input("patches", {1, 6, 8});
  auto h = b.add("join_class", op::cat{.dim = 1}, random_constant(b, "class_token", {1, 1, 8}, 7), patches);
  h = b.add("sequence_first", op::permute{.dims = {1, 0, 2}}, h);  // [7, 1, 8]
  auto packed = b.add("packed", op::linear{.in_features = 8, .out_features = 12}, h);
  auto q = b.add("q", op::slice{.dim = 2, .start = 0, .end = 4}, packed);
  auto k = b.add("k", op::slice{.dim = -1, .start = 5, .end = 12, .step = 2}, packed);
  q = b.add("split", op::reshape{.shape = {7, 2, 2}}, q);
  q = b.add("heads_first", op::permute{.dims = {1, 0, 2}}, q);  // [2, 7, 2]
  q = b.add("heads_last", op::permute{.dims = {1, 0, 2}}, q);
  q = b.add("merge", op::reshape{.shape = {7, 1, 4}}, q);
  k = b.add("relu", op::relu{}, k);
  h = b.add("join_features", op::cat{.dim = 2}, q, k);
  return b.output(b.add("out", op::linear{.in_features = 8, .out_features = 3}, h));
}

// eight_bit, with softmax reading its scores at 3 fraction bits and writing 7.
quantize_config eight_bit_softmax() {
  quantize_config c = eight_bit();
  c.entries.emplace_back("softmax", operand_formats{.data_in = fixed(8, 3), .data_out = fixed(8, 7)});
  return c;
}

auto hardware_graph(const graph& g, std::array<int, 4> parallelism, const quantize_config& config = eight_bit()) {
  return g | init_metadata | add_common_metadata | quantize(config) |
         add_hardware_metadata({.max_parallelism = parallelism});
}

// Widths that are not multiples of 4 (ROM words and stimulus pack whole words, not elements),
// and a symmetric saturation.
quantize_config odd_widths() {
  fixed_fmt symmetric{.width = 7, .frac = 7};
  symmetric.ovf = overflow::saturate_symmetric;
  return {.by = quantize_by::type,
          .default_config = operand_formats{.data_in = fixed(7, 3), .weight = fixed(5, 3), .bias = fixed(6, 2),
                                            .data_out = format(symmetric)}};
}

using mase_test_verilog::project_dir;

// Emits, lints and simulates with both simulators; every output word must match.
verilog::emit_info prove(const graph& g, const std::string& name, std::array<int, 4> parallelism,
                         const quantize_config& config = eight_bit(), const ordered_map<tensor>& inputs = {}) {
  return mase_test_verilog::prove_design(hardware_graph(g, parallelism, config), name, inputs);
}

}  // namespace

// [tools]: the test's time goes to Verilator's and yosys's own builds, which no sanitizer
// instruments, so the sanitize preset skips it (tests/CMakeLists.txt). The MLP and the CNN stay
// untagged: one design of each kind goes through the simulator under the sanitizers.
TEST_CASE("emit_verilog: an MLP matches the bit-exact evaluator at two parallelism settings", "[verilog]") {
  prove(mlp(), "mlp_2", {2, 2, 2, 2});
  prove(mlp(), "mlp_4x8", {4, 8, 4, 4});
}

TEST_CASE("emit_verilog: 7-bit data, 5-bit weights, 6-bit biases and symmetric saturation match", "[verilog][tools]") {
  prove(mlp(), "mlp_odd_widths", {3, 5, 3, 3}, odd_widths());
  prove(cnn(), "cnn_odd_widths", {2, 2, 2, 2}, odd_widths());
}

TEST_CASE("emit_verilog: a CNN (conv, relu, max pool, flatten, linear) matches at two parallelism settings",
          "[verilog]") {
  prove(cnn(), "cnn_1", {1, 1, 1, 1});
  prove(cnn(), "cnn_4x8", {4, 8, 4, 4});
}

TEST_CASE("emit_verilog: a transformer feed-forward block with a residual add matches at two parallelism settings",
          "[verilog][tools]") {
  prove(feed_forward(), "ffn_2", {2, 2, 2, 2});
  prove(feed_forward(), "ffn_8", {8, 8, 8, 8});
}

TEST_CASE("emit_verilog: a residual whose branches arrive with different lanes gets a lane converter", "[verilog][tools]") {
  // x streams 8 lanes wide, fc2's output 2: the add reads both at 8 lanes.
  const verilog::emit_info emitted = prove(feed_forward(), "ffn_8x2", {8, 2, 8, 8});
  CHECK(emitted.lane_converters == 1);
}

TEST_CASE("emit_verilog: a residual's skip FIFO holds the long branch's two samples in flight and a beat, and "
          "no less",
          "[verilog][tools]") {
  // x streams 3 lanes wide: 3*5*6 / 3 = 30 beats a sample. In steady state conv2 works on sample
  // k while conv1 works on k+1 and the fork pushes k+2: the skip FIFO holds two samples and a
  // beat. conv1's own FIFO needs only the two words of full rate.
  const verilog::emit_info emitted = prove(conv_residual(), "residual_skip", {3, 3, 3, 3});
  REQUIRE(emitted.fork_fifos.size() == 2);
  std::vector<std::int64_t> depths;
  for (const verilog::fork_fifo& f : emitted.fork_fifos) {
    CHECK(f.beats_per_sample == 30);
    depths.push_back(f.depth);
  }
  std::sort(depths.begin(), depths.end());
  CHECK(depths == std::vector<std::int64_t>{2, 61});

  const fs::path top_core = emitted.project_dir / "rtl" / "top_core.sv";
  std::string text;
  {
    std::ifstream in(top_core);
    text.assign(std::istreambuf_iterator<char>(in), {});
  }
  const auto steady_with_skip_depth = [&](int depth) {
    std::string changed = text;
    const std::size_t at = changed.find(".DEPTH(61)");
    REQUIRE(at != std::string::npos);
    changed.replace(at, 10, fmt::format(".DEPTH({})", depth));
    std::ofstream(top_core, std::ios::binary | std::ios::trunc) << changed;
    return verilog::simulate(emitted.project_dir, verilog::simulator::iverilog, {.stall_percent = 0});
  };
  // Without stalls the design runs at the convolutions' rate: 90 outputs of 27 taps on 3
  // multipliers, 810 cycles a sample.
  const verilog::simulation_result full = steady_with_skip_depth(61);
  INFO(full.log);
  REQUIRE(full.ok());
  CHECK(full.cycles_per_sample() == 810.0);
  // A beat less: the fork waits for the skip FIFO once a sample.
  const verilog::simulation_result slower = steady_with_skip_depth(60);
  INFO(slower.log);
  REQUIRE(slower.ok());
  CHECK(slower.cycles_per_sample() > 810.0);
  // Less than a sample: conv1 never receives its sample's last beat.
  const verilog::simulation_result stuck = steady_with_skip_depth(29);
  INFO(stuck.log);
  CHECK(stuck.passed == 0);
  CHECK(stuck.log.find("timeout: the design stopped producing outputs") != std::string::npos);
}

TEST_CASE("emit_verilog: depthwise convolutions and pools keep rows of one channel (line buffers) and match at "
          "two parallelism settings",
          "[verilog][tools]") {
  for (const auto& [name, parallelism] :
       {std::pair{std::string("depthwise_1"), std::array{1, 1, 1, 1}}, std::pair{std::string("depthwise_2"), std::array{2, 2, 2, 2}}}) {
    const auto hw = hardware_graph(depthwise_windows(), parallelism);
    // The cost model's buffer for each window component: a ring of (k - 1) * d + 1 + s rows of one
    // channel, per output lane, as mase_window_sweep picks mase_line_sweep.
    const verilog::hardware_cost cost = verilog::estimate_hardware_cost(hw);
    const std::map<std::string, std::int64_t> ring_rows{{"dw1", 4}, {"dw2", 6}, {"dw_stride", 5}, {"pool", 4}};
    for (const verilog::component_cost& c : cost.components) {
      if (!ring_rows.contains(c.node)) continue;
      INFO(c.node);
      REQUIRE(!c.memories.empty());
      CHECK(c.memories.front().what == "line buffer");
      const std::int64_t lanes_in = verilog::detail::param_int(graph(hw).at(c.node), "DATA_IN_0_PARALLELISM_DIM_0");
      const std::int64_t cols = c.node == "pool" ? 5 : 10;
      CHECK(c.memories.front().depth * lanes_in == ring_rows.at(c.node) * cols);
    }
    prove(depthwise_windows(), name, parallelism);
  }
  const verilog::emit_info straddling = prove(cat_then_pool(), "cat_then_pool", {4, 4, 4, 4});
  CHECK(straddling.lane_converters >= 1);
}

TEST_CASE("emit_verilog: conv, batch norm, relu, average pool, flatten, linear match at two parallelism settings",
          "[verilog][tools]") {
  prove(cnn_batch_norm_average(), "cnn_bn_avg_2", {2, 2, 2, 2});
  prove(cnn_batch_norm_average(), "cnn_bn_avg_4x3", {4, 3, 4, 4});
}

TEST_CASE("emit_verilog: MASE's JSC-Toy (batch_norm1d before each relu) and a batch norm over [N, C, L] match "
          "at two parallelism settings",
          "[verilog][tools]") {
  prove(jsc_toy(), "jsc_toy_1", {1, 1, 1, 1});
  prove(jsc_toy(), "jsc_toy_4", {4, 4, 4, 4});
  prove(batch_norm_over_length(), "batch_norm_over_length_1", {1, 1, 1, 1});
  prove(batch_norm_over_length(), "batch_norm_over_length_2", {2, 2, 2, 2});
}

TEST_CASE("emit_verilog: global average pooling (mean over H and W, adaptive pool to 1) matches at two "
          "parallelism settings",
          "[verilog][tools]") {
  prove(global_average(), "global_average_1", {1, 1, 1, 1});
  prove(global_average(), "global_average_3", {3, 4, 3, 3});
}

// The design holds each instance's parameters as typed values, and the printer writes each as its
// literal: numbers through the top level's <node>_<NAME>, a ROM's file inline.
TEST_CASE("plan_design: instance parameters are typed values, printed as their Verilog literals", "[verilog]") {
  const verilog::design d = verilog::plan_design(hardware_graph(global_average(), {1, 1, 1, 1}), {.samples = 2});
  const auto instance = [&](std::string_view name) -> const verilog::instance& {
    const auto it = std::find_if(d.instances.begin(), d.instances.end(), [&](const auto& i) { return i.name == name; });
    REQUIRE(it != d.instances.end());
    return *it;
  };
  const auto value = [](const verilog::instance& i, std::string_view name) -> const verilog::parameter_value& {
    const auto it = std::find_if(i.parameters.begin(), i.parameters.end(), [&](const auto& p) { return p.name == name; });
    REQUIRE(it != i.parameters.end());
    return it->value;
  };
  std::string top;
  for (const verilog::project_file& f : verilog::render_project(d))
    if (f.path == "rtl/top_core.sv") top = f.text;
  REQUIRE(!top.empty());

  const verilog::instance& fc1 = instance("fc1");
  CHECK(std::get<std::int64_t>(value(fc1, "DATA_IN_0_TENSOR_SIZE_DIM_0")) == 5);
  CHECK(std::get<std::int64_t>(value(fc1, "DATA_OUT_0_TENSOR_SIZE_DIM_0")) == 4);
  CHECK(std::get<verilog::project_path>(value(fc1, "WEIGHT_MEMFILE")).path == "rtl/fc1_weight.hex");
  CHECK(top.find("  localparam fc1_DATA_IN_0_TENSOR_SIZE_DIM_0 = 5;\n") != std::string::npos);
  CHECK(top.find(".WEIGHT_MEMFILE(\"rtl/fc1_weight.hex\")") != std::string::npos);

  // The mean over 6 x 6 pixels divides by 36 as a multiply by M = ceil(2^SHIFT / 36): a 64-bit
  // constant, printed sized.
  const verilog::instance& gap = instance("gap");
  const int shift = static_cast<int>(std::get<std::int64_t>(value(gap, "SHIFT")));
  const auto multiplier = std::get<verilog::sized_constant>(value(gap, "MULTIPLIER"));
  CHECK(multiplier.width == 64);
  REQUIRE(shift < 62);
  CHECK(multiplier.value * 36 >= std::int64_t{1} << shift);
  CHECK((multiplier.value - 1) * 36 < std::int64_t{1} << shift);
  CHECK(top.find(fmt::format("  localparam gap_MULTIPLIER = 64'd{};\n", multiplier.value)) != std::string::npos);
}

TEST_CASE("emit_verilog: a ceil_mode max pool and average pools of divisors 9 and 3 match at two parallelism "
          "settings",
          "[verilog][tools]") {
  prove(odd_pools(), "odd_pools_1", {1, 1, 1, 1}, eight_bit_for_hardware());
  prove(odd_pools(), "odd_pools_4", {4, 2, 4, 4}, eight_bit_for_hardware());
}

TEST_CASE("add_hardware_metadata: an average pool whose windows take several divisors is refused, naming them",
          "[verilog]") {
  builder b(27);
  auto x = b.input("x", {1, 2, 4, 4});
  auto h = b.add("relu", op::relu{}, x);
  graph g = b.output(b.add(
      "border_mean", op::avg_pool2d{.kernel_size = {3}, .stride = {1}, .padding = {1}, .count_include_pad = false}, h));
  CHECK_THROWS_WITH(hardware_graph(g, {1, 1, 1, 1}, eight_bit_for_hardware()),
                    Catch::Contains("node border_mean (avg_pool2d): the hardware divides every window by one "
                                    "constant, but this pool's windows take 3 divisors"));
  // Without hardware_formats the result stays float, and the message says how to give it a format.
  CHECK_THROWS_WITH(hardware_graph(g, {1, 1, 1, 1}),
                    Catch::Contains("node border_mean (avg_pool2d): its result has no fixed-point format"));
}

TEST_CASE("add_hardware_metadata: a mean over the channels is refused, naming the node and what has hardware",
          "[verilog]") {
  builder b(25);
  auto x = b.input("x", {1, 4, 3, 3});
  graph g = b.output(b.add("channel_mean", op::mean{.dim = {1}, .keepdim = true}, x));
  CHECK_THROWS_WITH(hardware_graph(g, {1, 1, 1, 1}),
                    Catch::Contains("node channel_mean (mean): the hardware averages trailing dimensions"));
}

TEST_CASE("emit_verilog: lookup-table activations, a fork and an element-wise product match", "[verilog][tools]") {
  prove(activations(), "activations_3", {3, 3, 3, 3});
  prove(activations(), "activations_4", {4, 4, 4, 4});
}

TEST_CASE("emit_verilog: the matmul of two streams (queries times keys) matches at two parallelism settings",
          "[verilog][tools]") {
  prove(query_key_scores(), "scores_2", {2, 2, 2, 2});
  prove(query_key_scores(), "scores_4x8", {4, 8, 4, 4});
}

TEST_CASE("emit_verilog: softmax over the attention scores matches the integer rule at two parallelism settings",
          "[verilog][tools]") {
  prove(attention_probabilities(), "softmax_2", {2, 2, 2, 2}, eight_bit_softmax());
  prove(attention_probabilities(), "softmax_4x8", {4, 8, 4, 4}, eight_bit_softmax());
}

TEST_CASE("emit_verilog: layer and RMS normalization match the integer rule at two parallelism settings",
          "[verilog][tools]") {
  prove(normalizations(), "normalizations_2", {2, 2, 2, 2});
  prove(normalizations(), "normalizations_4x8", {4, 8, 4, 4});
}

TEST_CASE("emit_verilog: two-head self-attention (head split, Kᵀ and merge as stream permutes) matches",
          "[verilog][tools]") {
  prove(mase_hardware_designs::self_attention(8, 32, 2), "attention_2", {2, 2, 2, 2}, eight_bit_softmax());
  prove(mase_hardware_designs::self_attention(8, 32, 2), "attention_4x8", {4, 8, 4, 4}, eight_bit_softmax());
}

TEST_CASE("emit_verilog: a post-norm encoder layer (attention, residuals, layer norms, GELU FFN) matches",
          "[verilog][tools]") {
  prove(mase_hardware_designs::encoder_layer(8, 32, 2, 64), "encoder_2", {2, 2, 2, 2}, eight_bit_softmax());
  prove(mase_hardware_designs::encoder_layer(8, 32, 2, 64), "encoder_4x8", {4, 8, 4, 4}, eight_bit_softmax());
}

TEST_CASE("emit_verilog: embeddings (a ROM by token id, a constant position table) and the [CLS] gather match",
          "[verilog][tools]") {
  const graph g = embeddings_and_head();
  const verilog::emit_info narrow = prove(g, "embeddings_2", {2, 2, 2, 2}, eight_bit(), token_ids(5));
  CHECK(std::find(narrow.modules.begin(), narrow.modules.end(), "mase_embedding") != narrow.modules.end());
  prove(g, "embeddings_4x8", {4, 8, 4, 4}, eight_bit(), token_ids(5));
}

TEST_CASE("emit_verilog: an additive attention mask broadcast over the scores matches at two parallelism settings",
          "[verilog][tools]") {
  prove(masked_softmax(), "masked_softmax_2", {2, 2, 2, 2}, eight_bit_softmax());
  prove(masked_softmax(), "masked_softmax_4", {4, 4, 4, 4}, eight_bit_softmax());
}

TEST_CASE("emit_verilog: a constant and two streams joined by cat, slices and permutes at batch 1 match at two "
          "parallelism settings",
          "[verilog][tools]") {
  const graph g = class_token_and_packed_heads();
  // At 2 lanes q keeps whole beats of each row (streamed, mase_slice); k's stride and, at 6
  // lanes, q's bounds within a beat take the gather (mase_permute).
  const auto narrow_design = hardware_graph(g, {2, 2, 2, 2});
  CHECK(narrow_design.at("q").meta.hardware.module == "mase_slice");
  CHECK(narrow_design.at("k").meta.hardware.module == "mase_permute");
  CHECK(hardware_graph(g, {4, 8, 4, 4}).at("q").meta.hardware.module == "mase_permute");
  const verilog::emit_info narrow = prove(g, "class_token_2", {2, 2, 2, 2});
  CHECK(std::count(narrow.components.begin(), narrow.components.end(), "sequence_first") == 0);  // wired through
  CHECK(narrow.samples == 6);  // a graph at batch 1 streams the testbench's samples one after another
  prove(g, "class_token_4x8", {4, 8, 4, 4});
}

TEST_CASE("add_hardware_metadata: a cat of three operands is refused, naming the node and the fix", "[verilog]") {
  builder b(24);
  auto x = b.input("x", {1, 4});
  auto y = b.add("three", op::cat{.dim = 1}, x, b.add("r", op::relu{}, x), x);
  const graph g = b.output(y);
  try {
    (void)hardware_graph(g, {2, 2, 2, 2});
    FAIL("no error");
  } catch (const error& e) {
    CHECK_THAT(e.what(), Catch::Matchers::Contains("node three (cat): the hardware joins two operands; this one joins 3") &&
                             Catch::Matchers::Contains("chain of cats"));
  }
}

TEST_CASE("emit_verilog: yosys synthesizes the design with one DSP per multiplier the emitter instantiated",
          "[verilog][tools]") {
  const fs::path dir = project_dir("mlp_synthesis");
  const auto [design, info] = run(hardware_graph(mlp(), {4, 8, 4, 4}), emit_verilog({.project_dir = dir, .samples = 2}));
  const verilog::emit_info& emitted = std::get<0>(info);
  CHECK(emitted.multipliers == 4 * 8 + 8 * 5);  // fc1: 4 x 8 tiles; fc2: 8 x 5 (5 divides 10)
  const verilog::synthesis_report r = verilog::synthesize(dir);
  INFO(r.stat);
  CHECK(r.multipliers == emitted.multipliers);
  CHECK(r.flip_flops > 0);
  CHECK(r.luts > 0);
  CHECK(r.cells > r.luts + r.flip_flops);
}

TEST_CASE("emit_verilog: the testbench reports a wrong expected word as a failure", "[verilog]") {
  const fs::path dir = project_dir("mlp_corrupted");
  run(hardware_graph(mlp(), {2, 2, 2, 2}), emit_verilog({.project_dir = dir, .samples = 2}));
  // Flip the lowest bit of the first expected word.
  std::string text;
  {
    std::ifstream in(dir / "tb" / "data_out_0.hex");
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  const std::size_t last_digit = text.find('\n') - 1;
  const std::string digits = "0123456789abcdef";
  const std::size_t value = digits.find(text[last_digit]);
  text[last_digit] = digits[value ^ 1u];
  std::ofstream(dir / "tb" / "data_out_0.hex") << text;
  const verilog::simulation_result r = verilog::simulate(dir, verilog::simulator::iverilog);
  CHECK(r.failed == 1);
  CHECK(r.passed == 2 * 10 - 1);
}

// Steady state with no stalls: cycles per sample against the ideal, multiply-accumulates over
// the multipliers instantiated. Prints the table docs/benchmarks.md quotes.
TEST_CASE("emit_verilog: linear layers stream within 1.25x of their ideal cycles", "[verilog][tools]") {
  struct layer_case {
    std::int64_t in, out;
    int lanes, tile;
  };
  const layer_case cases[] = {{64, 32, 4, 4}, {48, 16, 1, 1}, {256, 64, 8, 8}, {64, 10, 8, 8}, {784, 256, 16, 8}};
  fmt::print("linear layer        multipliers  ideal  measured  ratio\n");
  for (const layer_case& c : cases) {
    builder b(14);
    auto x = b.input("x", {1, c.in});
    auto y = b.add("fc", op::linear{.in_features = c.in, .out_features = c.out}, x);
    const fs::path dir = project_dir(fmt::format("linear_cycles_{}x{}", c.in, c.out));
    const auto [design, info] = run(hardware_graph(b.output(y), {c.lanes, c.tile, c.lanes, c.lanes}),
                                    emit_verilog({.project_dir = dir, .samples = 16}));
    const verilog::emit_info& emitted = std::get<0>(info);
    REQUIRE(emitted.linear_layers.size() == 1);
    const verilog::linear_cost& layer = emitted.linear_layers[0];
    CHECK(layer.macs_per_sample == c.in * c.out);
    const verilog::simulation_result r = verilog::simulate(dir, verilog::simulator::verilator, {.stall_percent = 0});
    CHECK(r.failed == 0);
    REQUIRE(r.steady_samples == 15);
    const double ratio = r.cycles_per_sample() / static_cast<double>(layer.ideal_cycles());
    fmt::print("{:>4} -> {:<4}        {:>11}  {:>5}  {:>8.1f}  {:.3f}\n", c.in, c.out, layer.multipliers,
               layer.ideal_cycles(), r.cycles_per_sample(), ratio);
    CHECK(ratio <= 1.25);
  }
}

// The output folder (core/project_folder.hpp): a foreign folder is refused before anything is
// written, re-emission replaces only what mase wrote, and the tools run only in mase's projects.
namespace {
std::string file_text(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}
}  // namespace

TEST_CASE("emit_verilog: testbench inputs that hold different numbers of samples are refused, naming both",
          "[verilog]") {
  // masked_softmax is at batch 1, so its reference runs once per sample: each input needs as many.
  const auto hw = hardware_graph(masked_softmax(), {2, 2, 2, 2}, eight_bit_softmax());
  const fs::path dir = project_dir("samples_disagree");
  ordered_map<tensor> inputs;
  inputs.insert_or_assign("scores", tensor(shape{3, 2, 8, 8}));
  inputs.insert_or_assign("mask", tensor(shape{2, 8}));
  CHECK_THROWS_WITH(run(hw, emit_verilog({.project_dir = dir, .inputs = inputs})),
                    "emit_verilog: testbench inputs scores and mask hold 3 and 2 samples; give each input the same "
                    "number");
  CHECK(!fs::exists(dir / "rtl"));  // nothing written
}

TEST_CASE("emit_verilog: a folder holding a user's files is refused and left byte for byte", "[verilog]") {
  const fs::path dir = project_dir("foreign_folder");
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "model.onnx") << "the user's model";
  std::ofstream(dir / "q.toml") << "[default]\nname = \"integer\"\n";
  std::ofstream(dir / "notes.txt") << "notes";
  const auto hw = hardware_graph(mlp(), {2, 2, 2, 2});
  CHECK_THROWS_WITH(run(hw, emit_verilog({.project_dir = dir, .samples = 1})),
                    Catch::Contains("is not empty and is not a project mase wrote") &&
                        Catch::Contains("model.onnx, notes.txt, q.toml"));
  CHECK(file_text(dir / "model.onnx") == "the user's model");
  CHECK(file_text(dir / "q.toml") == "[default]\nname = \"integer\"\n");
  CHECK(file_text(dir / "notes.txt") == "notes");
  CHECK(std::distance(fs::directory_iterator(dir), fs::directory_iterator()) == 3);

  // The tools refuse it too, before writing their work folders into it.
  CHECK_THROWS_WITH(verilog::simulate(dir, verilog::simulator::iverilog), Catch::Contains("not a verilog project"));
  CHECK_THROWS_WITH(verilog::lint(dir), Catch::Contains("not a verilog project"));
  CHECK_THROWS_WITH(verilog::synthesize(dir), Catch::Contains("not a verilog project"));
  CHECK(std::distance(fs::directory_iterator(dir), fs::directory_iterator()) == 3);
}

TEST_CASE("emit_verilog: emitting again replaces the project, its simulation and nothing else", "[verilog]") {
  const fs::path dir = project_dir("re_emitted");
  fs::remove_all(dir);
  run(hardware_graph(mlp(), {2, 2, 2, 2}), emit_verilog({.project_dir = dir, .samples = 1}));
  CHECK(verilog::simulate(dir, verilog::simulator::iverilog).ok());
  CHECK(fs::exists(dir / "sim" / "iverilog.log"));
  std::ofstream(dir / "README.txt") << "the user's notes on this design";
  std::ofstream(dir / "rtl" / "wrapper.sv") << "module wrapper; endmodule\n";

  // A different design: fewer lanes, so other ROM files.
  const auto [design, info] = run(hardware_graph(mlp(), {4, 4, 4, 4}), emit_verilog({.project_dir = dir, .samples = 1}));
  const verilog::emit_info& emitted = std::get<0>(info);
  CHECK_FALSE(fs::exists(dir / "sim"));  // the old design's simulation went with it
  CHECK(file_text(dir / "README.txt") == "the user's notes on this design");
  CHECK(file_text(dir / "rtl" / "wrapper.sv") == "module wrapper; endmodule\n");
  const auto manifest = read_project_manifest(dir);
  REQUIRE(manifest.has_value());
  CHECK_FALSE(manifest->files.contains("rtl/wrapper.sv"));
  for (const fs::path& f : emitted.rtl_files) CHECK(manifest->files.contains(fs::relative(f, dir).generic_string()));
  // Every file in the folder is the project's, the user's two, or the marker.
  std::size_t files = 0;
  for (const auto& entry : fs::recursive_directory_iterator(dir))
    if (entry.is_regular_file()) ++files;
  CHECK(files == manifest->files.size() + 3);
}
