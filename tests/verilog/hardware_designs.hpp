#pragma once
// Designs the hardware cost model is checked on: tests/verilog/test_hardware_cost.cpp and the
// calibration program benchmarks/hardware_cost_calibration.cpp build them from here.
#include <mase/ir/builder.hpp>
#include <mase/pass/quantize.hpp>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

namespace mase_hardware_designs {

inline mase::format fixed_format(int width, int frac) { return mase::format(mase::fixed_fmt{.width = width, .frac = frac}); }

// Every quantizable node at `data`-bit data and results and `weight`-bit weights and biases; the
// weights' width − 1 fraction bits span [-1, 1), where full_range_parameters draws them.
inline mase::quantize_config widths(int data, int weight) {
  return {.by = mase::quantize_by::type,
          .default_config = mase::operand_formats{.data_in = fixed_format(data, data / 2),
                                                  .weight = fixed_format(weight, weight - 1),
                                                  .bias = fixed_format(weight, weight / 2),
                                                  .data_out = fixed_format(data, data / 2)}};
}

// Every parameter drawn uniformly from [-1, 1) (a variance from [0.25, 1)), so that the ROMs hold
// codes across the whole range, as a trained network's do: a layer's initial weights (about
// ±1/√fan-in) would quantize mostly to zero at narrow widths, and yosys would fold the
// multipliers of zero weights away.
inline mase::graph full_range_parameters(mase::graph g, std::uint32_t seed) {
  std::mt19937 random(seed);
  std::uniform_real_distribution<float> symmetric(-1.0f, 1.0f), variance(0.25f, 1.0f);
  for (mase::node_id id : g.order()) {
    if (g[id].is<mase::op::constant>()) continue;  // a constant of the model (attention's √d), not a weight
    for (auto& [role, values] : g[id].parameters)
      for (float& v : values.values()) v = role == "running_var" ? variance(random) : symmetric(random);
  }
  return g;
}

// Linear layers of the given sizes, with relu (or gelu) between them.
inline mase::graph mlp(const std::vector<std::int64_t>& sizes, bool gelu = false) {
  using namespace mase;
  builder b(21);
  auto h = b.input("x", {1, sizes[0]});
  for (std::size_t i = 1; i < sizes.size(); ++i) {
    h = b.add(fmt::format("fc{}", i), op::linear{.in_features = sizes[i - 1], .out_features = sizes[i]}, h);
    if (i + 1 < sizes.size()) {
      if (gelu) h = b.add(fmt::format("act{}", i), op::gelu{}, h);
      else h = b.add(fmt::format("act{}", i), op::relu{}, h);
    }
  }
  return b.output(h);
}

// Multi-head self-attention as a PyTorch export has it, on sequences of `length` tokens of
// `hidden` features: Q, K, V projections of x, the heads split by reshape and permute (K's into its
// transpose), softmax(Q·Kᵀ / √d)·V per head, the heads merged by permute and reshape, and the
// output projection. √d must be a power of two (the division then moves the point): d = hidden /
// heads a power of 4.
inline mase::node_id self_attention(mase::builder& b, mase::node_id x, std::int64_t length, std::int64_t hidden,
                                    std::int64_t heads) {
  using namespace mase;
  const std::int64_t d = hidden / heads;
  const auto split = [&](const char* name, node_id h, dims order) {
    h = b.add(fmt::format("{}_split", name), op::reshape{.shape = {-1, length, heads, d}}, h);
    return b.add(fmt::format("{}_heads", name), op::permute{.dims = order}, h);
  };
  const auto projection = [&](const char* name, node_id h) {
    return b.add(name, op::linear{.in_features = hidden, .out_features = hidden}, h);
  };
  auto q = split("q", projection("q_proj", x), {0, 2, 1, 3});
  auto k = split("k", projection("k_proj", x), {0, 2, 3, 1});
  auto v = split("v", projection("v_proj", x), {0, 2, 1, 3});
  auto sqrt_d = b.add("sqrt_d", op::constant{});
  b.set_parameter(sqrt_d, "value", tensor(shape{}, {static_cast<float>(std::sqrt(static_cast<double>(d)))}));
  auto scores = b.add("scaled", op::div{}, b.add("scores", op::matmul{}, q, k), sqrt_d);
  auto context = b.add("context", op::matmul{}, b.add("softmax", op::softmax{.dim = -1}, scores), v);
  context = b.add("merge", op::permute{.dims = {0, 2, 1, 3}}, context);
  context = b.add("merged", op::reshape{.shape = {-1, length, hidden}}, context);
  return projection("out_proj", context);
}

inline mase::graph self_attention(std::int64_t length, std::int64_t hidden, std::int64_t heads) {
  mase::builder b(29);
  auto x = b.input("x", {1, length, hidden});
  return b.output(self_attention(b, x, length, hidden, heads));
}

// A post-norm transformer encoder layer (BERT's): the self-attention above, a residual add and a
// layer norm, a GELU feed-forward block of `ffn` features, a second residual add and layer norm.
inline mase::graph encoder_layer(std::int64_t length, std::int64_t hidden, std::int64_t heads, std::int64_t ffn) {
  using namespace mase;
  builder b(31);
  auto x = b.input("x", {1, length, hidden});
  auto attended = self_attention(b, x, length, hidden, heads);
  auto h = b.add("attention_norm", op::layer_norm{.normalized_shape = {hidden}}, b.add("residual1", op::add{}, x, attended));
  auto f = b.add("gelu", op::gelu{}, b.add("ffn_in", op::linear{.in_features = hidden, .out_features = ffn}, h));
  f = b.add("ffn_out", op::linear{.in_features = ffn, .out_features = hidden}, f);
  return b.output(b.add("output_norm", op::layer_norm{.normalized_shape = {hidden}}, b.add("residual2", op::add{}, h, f)));
}

// conv 3×3 (padding 1), relu, max pool 2×2, flatten, linear to 10.
inline mase::graph cnn(std::int64_t channels, std::int64_t size, std::int64_t filters) {
  using namespace mase;
  builder b(23);
  auto x = b.input("x", {1, channels, size, size});
  auto h = b.add("conv1", op::conv2d{.in_channels = channels, .out_channels = filters, .kernel_size = {3}, .padding = {1}}, x);
  h = b.add("relu1", op::relu{}, h);
  h = b.add("pool1", op::max_pool2d{.kernel_size = {2}, .stride = {2}}, h);
  h = b.add("flatten", op::flatten{.start_dim = 1}, h);
  auto y = b.add("fc1", op::linear{.in_features = filters * size * size / 4, .out_features = 10}, h);
  return b.output(y);
}

}  // namespace mase_hardware_designs
