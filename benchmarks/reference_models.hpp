#pragma once
// The three reference models of bench_inference, built with mase::builder from a fixed seed
// (deterministic weights, PyTorch's initialisation). benchmarks/pytorch_baseline.py builds the
// same architectures in PyTorch for the baseline figures.

#include <mase/ir/builder.hpp>
#include <mase/pass/quantize.hpp>

#include <cstdint>
#include <string>

namespace mase::reference_models {

// MLP 784-256-64-10 with ReLUs.
inline graph mlp(std::int64_t batch, std::uint64_t seed = 1) {
  builder b(seed);
  auto x = b.input("x", {batch, 784});
  auto h = b.add("fc1", op::linear{.in_features = 784, .out_features = 256}, x);
  h = b.add("relu1", op::relu{}, h);
  h = b.add("fc2", op::linear{.in_features = 256, .out_features = 64}, h);
  h = b.add("relu2", op::relu{}, h);
  auto y = b.add("fc3", op::linear{.in_features = 64, .out_features = 10}, h);
  return b.output(y);
}

// LeNet-5 on 28x28 inputs: conv 5x5 (pad 2) 1->6, relu, max pool 2, conv 5x5 6->16, relu,
// max pool 2, flatten, 400-120-84-10 with ReLUs.
inline graph lenet5(std::int64_t batch, std::uint64_t seed = 2) {
  builder b(seed);
  auto x = b.input("x", {batch, 1, 28, 28});
  auto h = b.add("conv1", op::conv2d{.in_channels = 1, .out_channels = 6, .kernel_size = {5}, .padding = {2}}, x);
  h = b.add("relu1", op::relu{}, h);
  h = b.add("pool1", op::max_pool2d{.kernel_size = {2}, .stride = {2}}, h);
  h = b.add("conv2", op::conv2d{.in_channels = 6, .out_channels = 16, .kernel_size = {5}}, h);
  h = b.add("relu2", op::relu{}, h);
  h = b.add("pool2", op::max_pool2d{.kernel_size = {2}, .stride = {2}}, h);
  h = b.add("flatten", op::flatten{}, h);
  h = b.add("fc1", op::linear{.in_features = 400, .out_features = 120}, h);
  h = b.add("relu3", op::relu{}, h);
  h = b.add("fc2", op::linear{.in_features = 120, .out_features = 84}, h);
  h = b.add("relu4", op::relu{}, h);
  auto y = b.add("fc3", op::linear{.in_features = 84, .out_features = 10}, h);
  return b.output(y);
}

struct encoder_config {
  std::int64_t hidden = 128, heads = 2, layers = 2, ffn = 512, sequence = 32;
};

// A bert-tiny-like encoder (post-norm, as BERT): per layer, q/k/v projections, heads split by
// reshape + permute, scaled dot-product attention, heads merged, output projection, residual
// add and layer norm, then a GELU feed-forward block with its residual add and layer norm.
inline graph encoder(std::int64_t batch, encoder_config c = {}, std::uint64_t seed = 3) {
  builder b(seed);
  const std::int64_t head_dim = c.hidden / c.heads;
  auto x = b.input("x", {batch, c.sequence, c.hidden});
  node_id h = x;
  for (std::int64_t l = 0; l < c.layers; ++l) {
    const std::string p = "layer" + std::to_string(l) + "_";
    const auto projection = [&](const std::string& name, node_id in, std::int64_t from, std::int64_t to) {
      return b.add(p + name, op::linear{.in_features = from, .out_features = to}, in);
    };
    const auto split_heads = [&](const std::string& name, node_id in) {
      auto r = b.add(p + name + "_heads", op::reshape{.shape = {batch, c.sequence, c.heads, head_dim}}, in);
      return b.add(p + name + "_perm", op::permute{.dims = {0, 2, 1, 3}}, r);
    };
    auto q = split_heads("q", projection("q", h, c.hidden, c.hidden));
    auto k = split_heads("k", projection("k", h, c.hidden, c.hidden));
    auto v = split_heads("v", projection("v", h, c.hidden, c.hidden));
    auto attn = b.add(p + "attention", op::scaled_dot_product_attention{}, q, k, v);
    auto merged = b.add(p + "merge_perm", op::permute{.dims = {0, 2, 1, 3}}, attn);
    merged = b.add(p + "merge_heads", op::reshape{.shape = {batch, c.sequence, c.hidden}}, merged);
    auto o = projection("o", merged, c.hidden, c.hidden);
    auto r1 = b.add(p + "residual1", op::add{}, o, h);
    auto n1 = b.add(p + "norm1", op::layer_norm{.normalized_shape = {c.hidden}}, r1);
    auto f = projection("ffn_up", n1, c.hidden, c.ffn);
    f = b.add(p + "gelu", op::gelu{}, f);
    f = projection("ffn_down", f, c.ffn, c.hidden);
    auto r2 = b.add(p + "residual2", op::add{}, f, n1);
    h = b.add(p + "norm2", op::layer_norm{.normalized_shape = {c.hidden}}, r2);
  }
  return b.output(h);
}

// torchvision's resnet18 (BasicBlocks [2, 2, 2, 2], batch norms after every convolution,
// a 1x1 stride-2 convolution on the shortcut where the shape changes) on 3 x size x size images.
inline graph resnet18(std::int64_t batch, std::int64_t size = 224, std::uint64_t seed = 4) {
  builder b(seed);
  auto x = b.input("x", {batch, 3, size, size});
  const auto conv_bn = [&](const std::string& name, node_id in, std::int64_t from, std::int64_t to,
                           std::int64_t kernel, std::int64_t stride) {
    auto c = b.add(name, op::conv2d{.in_channels = from, .out_channels = to, .kernel_size = {kernel},
                                    .stride = {stride}, .padding = {kernel / 2}, .bias = false}, in);
    return b.add(name + "_bn", op::batch_norm2d{.num_features = to}, c);
  };
  auto h = b.add("relu", op::relu{}, conv_bn("conv1", x, 3, 64, 7, 2));
  h = b.add("maxpool", op::max_pool2d{.kernel_size = {3}, .stride = {2}, .padding = {1}}, h);
  std::int64_t channels = 64;
  for (int stage = 1; stage <= 4; ++stage) {
    const std::int64_t width = std::int64_t{64} << (stage - 1);
    for (int block = 0; block < 2; ++block) {
      const std::string p = "layer" + std::to_string(stage) + "_" + std::to_string(block) + "_";
      const std::int64_t stride = stage > 1 && block == 0 ? 2 : 1;
      auto y = b.add(p + "relu1", op::relu{}, conv_bn(p + "conv1", h, channels, width, 3, stride));
      y = conv_bn(p + "conv2", y, width, width, 3, 1);
      const node_id shortcut = stride != 1 || channels != width ? conv_bn(p + "downsample", h, channels, width, 1, stride) : h;
      h = b.add(p + "relu2", op::relu{}, b.add(p + "add", op::add{}, y, shortcut));
      channels = width;
    }
  }
  h = b.add("avgpool", op::adaptive_avg_pool2d{.output_size = {1, 1}}, h);
  h = b.add("flatten", op::flatten{}, h);
  return b.output(b.add("fc", op::linear{.in_features = 512, .out_features = 1000}, h));
}

// torchvision's squeezenet1_1 (Fire modules: a 1x1 squeeze, then 1x1 and 3x3 expands joined by
// cat along the channels; max pools with ceil_mode; a 1x1 convolution to the classes and a global
// average pool) on 3 x size x size images. The dropout before the classifier is left out (an
// identity at inference).
inline graph squeezenet1_1(std::int64_t batch, std::int64_t size = 224, std::int64_t classes = 1000,
                           std::uint64_t seed = 5) {
  builder b(seed);
  auto x = b.input("x", {batch, 3, size, size});
  const auto conv_relu = [&](const std::string& name, node_id in, std::int64_t from, std::int64_t to,
                             std::int64_t kernel, std::int64_t stride = 1) {
    auto c = b.add(name, op::conv2d{.in_channels = from, .out_channels = to, .kernel_size = {kernel},
                                    .stride = {stride}, .padding = {stride == 1 ? kernel / 2 : 0}}, in);
    return b.add(name + "_relu", op::relu{}, c);
  };
  const auto fire = [&](const std::string& name, node_id in, std::int64_t from, std::int64_t squeeze,
                        std::int64_t expand) {
    auto s = conv_relu(name + "_squeeze", in, from, squeeze, 1);
    auto e1 = conv_relu(name + "_expand1x1", s, squeeze, expand, 1);
    auto e3 = conv_relu(name + "_expand3x3", s, squeeze, expand, 3);
    return b.add(name, op::cat{.dim = 1}, e1, e3);
  };
  const auto pool = [&](const std::string& name, node_id in) {
    return b.add(name, op::max_pool2d{.kernel_size = {3}, .stride = {2}, .ceil_mode = true}, in);
  };
  auto h = pool("pool0", conv_relu("conv0", x, 3, 64, 3, 2));
  h = fire("fire3", h, 64, 16, 64);
  h = pool("pool5", fire("fire4", h, 128, 16, 64));
  h = fire("fire6", h, 128, 32, 128);
  h = pool("pool8", fire("fire7", h, 256, 32, 128));
  h = fire("fire9", h, 256, 48, 192);
  h = fire("fire10", h, 384, 48, 192);
  h = fire("fire11", h, 384, 64, 256);
  h = fire("fire12", h, 512, 64, 256);
  h = conv_relu("classifier", h, 512, classes, 1);
  h = b.add("avgpool", op::adaptive_avg_pool2d{.output_size = {1, 1}}, h);
  return b.output(b.add("flatten", op::flatten{}, h));
}

// torchvision's mobilenet_v2 (width 1.0): a 3x3 stride-2 stem, seventeen inverted residuals (1x1
// expansion by t, 3x3 depthwise at stride s, 1x1 linear projection; a residual add where the
// stride is 1 and the channels stay), a 1x1 convolution to 1280, global average pooling and the
// classifier, batch norms after every convolution and relu6 after all but the projections. The
// dropout before the classifier is left out (an identity at inference).
inline graph mobilenet_v2(std::int64_t batch, std::int64_t size = 224, std::int64_t classes = 1000,
                          std::uint64_t seed = 6) {
  builder b(seed);
  auto x = b.input("x", {batch, 3, size, size});
  const auto conv_bn = [&](const std::string& name, node_id in, std::int64_t from, std::int64_t to,
                           std::int64_t kernel, std::int64_t stride, std::int64_t groups, bool relu6) {
    auto c = b.add(name, op::conv2d{.in_channels = from, .out_channels = to, .kernel_size = {kernel},
                                    .stride = {stride}, .padding = {kernel / 2}, .groups = groups, .bias = false}, in);
    c = b.add(name + "_bn", op::batch_norm2d{.num_features = to}, c);
    return relu6 ? b.add(name + "_relu6", op::relu6{}, c) : c;
  };
  auto h = conv_bn("stem", x, 3, 32, 3, 2, 1, true);
  std::int64_t channels = 32;
  struct stage { std::int64_t expansion, out, repeats, stride; };
  int index = 1;
  for (const stage& st : {stage{1, 16, 1, 1}, stage{6, 24, 2, 2}, stage{6, 32, 3, 2}, stage{6, 64, 4, 2},
                          stage{6, 96, 3, 1}, stage{6, 160, 3, 2}, stage{6, 320, 1, 1}}) {
    for (std::int64_t r = 0; r < st.repeats; ++r, ++index) {
      const std::string p = "block" + std::to_string(index) + "_";
      const std::int64_t stride = r == 0 ? st.stride : 1, hidden = channels * st.expansion;
      node_id y = h;
      if (st.expansion != 1) y = conv_bn(p + "expand", y, channels, hidden, 1, 1, 1, true);
      y = conv_bn(p + "depthwise", y, hidden, hidden, 3, stride, hidden, true);
      y = conv_bn(p + "project", y, hidden, st.out, 1, 1, 1, false);
      h = stride == 1 && channels == st.out ? b.add(p + "add", op::add{}, h, y) : y;
      channels = st.out;
    }
  }
  h = conv_bn("head", h, channels, 1280, 1, 1, 1, true);
  h = b.add("avgpool", op::adaptive_avg_pool2d{.output_size = {1, 1}}, h);
  h = b.add("flatten", op::flatten{}, h);
  return b.output(b.add("classifier", op::linear{.in_features = 1280, .out_features = classes}, h));
}

// Values uniform in [-1, 1) from a fixed seed (a 64-bit LCG): the models' inputs.
inline tensor random_input(const shape& s, std::uint64_t seed) {
  tensor t(s);
  std::uint64_t state = seed;
  for (float& v : t.values()) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    v = static_cast<float>(state >> 40) * 0x1p-24f * 2.0f - 1.0f;
  }
  return t;
}

// 8-bit fixed point for every quantizable node: data_in / weight / bias / data_out of width 8,
// 4 fraction bits for activations and 6 for parameters (the demo picks fractions from
// profiled ranges; for speed only the widths matter).
inline quantize_config eight_bit_config() {
  quant_config c{{"name", std::string("fixed")},
                 {"data_in_width", std::int64_t{8}},  {"data_in_frac_width", std::int64_t{4}},
                 {"weight_width", std::int64_t{8}},   {"weight_frac_width", std::int64_t{6}},
                 {"bias_width", std::int64_t{8}},     {"bias_frac_width", std::int64_t{6}},
                 {"data_out_width", std::int64_t{8}}, {"data_out_frac_width", std::int64_t{4}}};
  return quantize_config{.by = quantize_by::type, .default_config = c};
}

}  // namespace mase::reference_models
