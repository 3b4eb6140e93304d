// estimate_flops: MASE's fine-grained counts, checked against figures worked out by hand from the
// rules in flop_estimator.hpp.

#include <mase/ir/builder.hpp>
#include <mase/pass/add_common_metadata.hpp>
#include <mase/pass/flop_estimator.hpp>
#include <mase/pass/init_metadata.hpp>

#include <catch2/catch.hpp>

using namespace mase;

namespace Catch {
template <>
struct StringMaker<op_cost> {
  static std::string convert(const op_cost& c) {
    return fmt::format("{{parameters {}, computations {}, backward {}, in {}, out {}}}", c.parameters, c.computations,
                       c.backward_computations, c.input_buffer_size, c.output_buffer_size);
  }
};
}  // namespace Catch

namespace {
graph with_metadata(graph g) { return std::move(g) | init_metadata | add_common_metadata; }

op_cost cost(std::int64_t parameters, std::int64_t computations, std::int64_t backward, std::int64_t in,
             std::int64_t out) {
  return {.parameters = parameters,
          .computations = computations,
          .backward_computations = backward,
          .input_buffer_size = in,
          .output_buffer_size = out};
}
}  // namespace

TEST_CASE("MLP: linear counts weight x rows, bias in parameters, relu one per element") {
  builder b;
  auto x = b.input("x", {8, 784});
  auto h = b.add("fc1", op::linear{.in_features = 784, .out_features = 256}, x);
  h = b.add("relu1", op::relu{}, h);
  auto y = b.add("fc2", op::linear{.in_features = 256, .out_features = 10}, h);
  const graph raw = b.output(y);
  const flop_estimate e = estimate_flops(with_metadata(raw));
  // fc1: W 784*256 = 200704 (+256 bias); 8 rows of 784 -> 200704*8 forward, twice that backward.
  CHECK(e.nodes.at("fc1") == cost(200960, 1605632, 3211264, 8 * 784, 8 * 256));
  CHECK(e.nodes.at("relu1") == cost(0, 2048, 2048, 2048, 2048));
  CHECK(e.nodes.at("fc2") == cost(2570, 20480, 40960, 2048, 80));
  CHECK(e.nodes.at("x") == op_cost{});
  CHECK(e.nodes.at("output") == op_cost{});
  CHECK(e.total == cost(203530, 1628160, 3254272, 10368, 4176));

  std::vector<std::string> names;
  for (const auto& [name, c] : e.nodes) names.push_back(name);
  CHECK(names == std::vector<std::string>{"x", "fc1", "relu1", "fc2", "output"});

  // The pipeline form gives the same figures.
  const auto result = run(raw, init_metadata | add_common_metadata | flop_estimator);
  CHECK(result.get<flop_estimate>() == e);
}

TEST_CASE("linear over a 3-D input counts every row") {
  builder b;
  auto x = b.input("x", {2, 5, 16});
  auto y = b.add("fc", op::linear{.in_features = 16, .out_features = 4, .bias = false}, x);
  const flop_estimate e = estimate_flops(with_metadata(b.output(y)));
  CHECK(e.nodes.at("fc") == cost(64, 64 * 10, 2 * 64 * 10, 160, 40));
}

TEST_CASE("small CNN: conv window with groups, batch norm, pools") {
  builder b;
  auto x = b.input("x", {2, 3, 8, 8});
  auto h = b.add("conv1", op::conv2d{.in_channels = 3, .out_channels = 4, .kernel_size = {3}, .padding = {1}}, x);
  h = b.add("bn1", op::batch_norm2d{.num_features = 4}, h);
  h = b.add("relu", op::relu{}, h);
  h = b.add("pool", op::max_pool2d{.kernel_size = {2}}, h);
  h = b.add("conv2", op::conv2d{.in_channels = 4, .out_channels = 8, .kernel_size = {3}, .groups = 2}, h);
  h = b.add("gap", op::adaptive_avg_pool2d{.output_size = {1}}, h);
  h = b.add("flatten", op::flatten{}, h);
  auto y = b.add("fc", op::linear{.in_features = 8, .out_features = 10}, h);
  const flop_estimate e = estimate_flops(with_metadata(b.output(y)));

  // conv1: y [2,4,8,8] = 512 outputs, window 3*3*3 = 27; x = 384; W 108 + b 4.
  CHECK(e.nodes.at("conv1") == cost(112, 512 * 27, 2 * 384 * 27, 384, 512));
  // batch norm: gamma and beta (running statistics are buffers); 4 per element.
  CHECK(e.nodes.at("bn1") == cost(8, 4 * 512, 4 * 512, 512, 512));
  CHECK(e.nodes.at("relu") == cost(0, 512, 512, 512, 512));
  // pool 2x2: y [2,4,4,4] = 128 outputs, each over 4 inputs; backward over the 512 inputs.
  CHECK(e.nodes.at("pool") == cost(0, 128 * 4, 512 * 4, 512, 128));
  // conv2, 2 groups: each output reads 3*3*(4/2) = 18 inputs; y [2,8,2,2] = 64; W [8,2,3,3].
  CHECK(e.nodes.at("conv2") == cost(144 + 8, 64 * 18, 2 * 128 * 18, 128, 64));
  CHECK(e.nodes.at("gap") == cost(0, 64, 64, 64, 16));
  CHECK(e.nodes.at("flatten") == cost(0, 0, 0, 16, 16));
  CHECK(e.nodes.at("fc") == cost(90, 160, 320, 16, 20));
  CHECK(e.total == cost(362, 18272, 30336, 2144, 1780));
}

TEST_CASE("1-D convolution and pools") {
  builder b;
  auto x = b.input("x", {2, 4, 10});
  auto h = b.add("conv", op::conv1d{.in_channels = 4, .out_channels = 6, .kernel_size = {3}, .bias = false}, x);
  auto m = b.add("maxp", op::max_pool1d{.kernel_size = {2}}, h);
  auto a = b.add("avgp", op::avg_pool1d{.kernel_size = {4}, .stride = {2}}, h);
  auto g1 = b.add("gap", op::adaptive_avg_pool1d{.output_size = {1}}, h);
  const flop_estimate e = estimate_flops(with_metadata(b.output(m, a, g1)));
  // conv: y [2,6,8] = 96, window 3*4 = 12; x = 80; W [6,4,3] = 72.
  CHECK(e.nodes.at("conv") == cost(72, 96 * 12, 2 * 80 * 12, 80, 96));
  // max pool k2: y [2,6,4] = 48; avg pool k4 s2: y [2,6,3] = 36.
  CHECK(e.nodes.at("maxp") == cost(0, 48 * 2, 96 * 2, 96, 48));
  CHECK(e.nodes.at("avgp") == cost(0, 36 * 4, 96 * 4, 96, 36));
  CHECK(e.nodes.at("gap") == cost(0, 96, 96, 96, 12));
}

TEST_CASE("3-D convolution, pools and batch norm, pow with a tensor exponent") {
  builder b;
  auto x = b.input("x", {1, 2, 4, 6, 6});
  auto e = b.input("e", {3, 1});
  auto h = b.add("conv", op::conv3d{.in_channels = 2, .out_channels = 4, .kernel_size = {3}, .padding = {1}, .groups = 2},
                 x);
  h = b.add("bn", op::batch_norm3d{.num_features = 4}, h);
  auto m = b.add("maxp", op::max_pool3d{.kernel_size = {2}}, h);
  auto a = b.add("avgp", op::avg_pool3d{.kernel_size = {1, 2, 2}}, h);
  auto p = b.add("pow", op::pow{}, m, e);
  auto q = b.add("square", op::pow{.exponent = 2.0}, a);
  const flop_estimate est = estimate_flops(with_metadata(b.output(p, q)));
  // conv: y [1,4,4,6,6] = 576, window 3*3*3*(2/2) = 27; x = 288; W [4,1,3,3,3] = 108 + b 4.
  CHECK(est.nodes.at("conv") == cost(112, 576 * 27, 2 * 288 * 27, 288, 576));
  CHECK(est.nodes.at("bn") == cost(8, 4 * 576, 4 * 576, 576, 576));
  // max pool k2: y [1,4,2,3,3] = 72, window 8; avg pool k (1,2,2): y [1,4,4,3,3] = 144, window 4.
  CHECK(est.nodes.at("maxp") == cost(0, 72 * 8, 576 * 8, 576, 72));
  CHECK(est.nodes.at("avgp") == cost(0, 144 * 4, 576 * 4, 576, 144));
  // pow: one per result element; the exponent [3, 1] broadcasts into the base's 72.
  CHECK(est.nodes.at("pow") == cost(0, 72, 72, 72 + 3, 72));
  CHECK(est.nodes.at("square") == cost(0, 144, 144, 144, 144));
}

TEST_CASE("attention block ops: layer norm, matmul, softmax, attention, embedding, data movement") {
  builder b;
  auto ids = b.input("ids", {2, 3});
  auto q = b.input("q", {2, 3, 4, 8});
  auto k = b.input("k", {2, 3, 5, 8});
  auto v = b.input("v", {2, 3, 5, 6});
  auto x = b.input("x", {2, 4, 8});
  auto emb = b.add("emb", op::embedding{.num_embeddings = 10, .embedding_dim = 4}, ids);
  auto attn = b.add("attn", op::scaled_dot_product_attention{}, q, k, v);
  auto ln = b.add("ln", op::layer_norm{.normalized_shape = {8}}, x);
  auto w = b.add("w", op::constant{.shape = {8, 5}});
  b.set_parameter(w, "value", tensor(shape{8, 5}));
  auto mm = b.add("mm", op::matmul{}, ln, w);
  auto sm = b.add("sm", op::softmax{.dim = -1}, mm);
  auto parts = b.add("parts", op::split{.split_size = 3, .dim = 1}, x);
  auto second = b.add("second", op::getitem{.index = 1}, parts);
  auto bias = b.add("bias", op::constant{.shape = {1, 8}});
  b.set_parameter(bias, "value", tensor(shape{1, 8}));
  auto sum = b.add("sum", op::add{}, second, bias);
  auto t = b.add("t", op::transpose{.dim0 = 1, .dim1 = 2}, sm);
  auto avg = b.add("avg", op::mean{.dim = {-1}}, t);
  const flop_estimate e = estimate_flops(with_metadata(b.output(emb, attn, avg, sum)));

  CHECK(e.nodes.at("emb") == cost(40, 0, 0, 6, 24));
  // queries = 2*3*4 = 24, S = 5: scores 5*8, scale 5, softmax 3*5, weighted sum 5*6 per query.
  CHECK(e.nodes.at("attn") == cost(0, 24 * 5 * (8 + 6 + 4), 2 * 24 * 5 * (8 + 6 + 4), 192 + 240 + 180, 144));
  CHECK(e.nodes.at("ln") == cost(16, 5 * 64, 5 * 64, 64, 64));
  CHECK(e.nodes.at("w") == cost(40, 0, 0, 0, 0));
  // y [2,4,5] = 40 outputs, each a dot product of length 8.
  CHECK(e.nodes.at("mm") == cost(0, 320, 640, 64 + 40, 40));
  CHECK(e.nodes.at("sm") == cost(0, 120, 120, 40, 40));
  CHECK(e.nodes.at("parts") == cost(0, 0, 0, 64, 48 + 16));
  CHECK(e.nodes.at("second") == cost(0, 0, 0, 16, 16));  // reads the chunk it selects
  CHECK(e.nodes.at("sum") == cost(0, 16, 16, 16 + 8, 16));  // broadcast: one per output element
  CHECK(e.nodes.at("t") == cost(0, 0, 0, 40, 40));
  CHECK(e.nodes.at("avg") == cost(0, 40, 40, 40, 10));
}

TEST_CASE("estimate_flops needs common metadata and says which pass provides it") {
  builder b;
  auto x = b.input("x", {1, 4});
  auto y = b.add("fc", op::linear{.in_features = 4, .out_features = 2}, x);
  const graph g = b.output(y);
  CHECK_THROWS_WITH(estimate_flops(g), Catch::Contains("node fc") && Catch::Contains("add_common_metadata"));
}

TEST_CASE("transposed convolutions count each input's scatter, pad, tile, expand, index_select move data") {
  builder b;
  auto x = b.input("x", {2, 8, 4, 4});
  // 8 -> 6 channels in 2 groups, 3x3, stride 2: y [2, 6, 9, 9]. Each of the 256 inputs meets
  // 3 output channels of its group x 9 taps = 27 weights. W [8, 3, 3, 3] = 216, bias 6.
  auto h = b.add("up", op::conv_transpose2d{.in_channels = 8, .out_channels = 6, .kernel_size = {3}, .stride = {2},
                                            .groups = 2},
                 x);
  h = b.add("pad", op::pad{.pads = {1, 0, 0, 1}}, h);                    // [2, 6, 10, 10]
  h = b.add("tile", op::tile{.dims = {2}}, h);                           // [2, 6, 10, 20]
  auto idx = b.input("idx", {3});
  h = b.add("pick", op::index_select{.dim = 1}, h, idx);                 // [2, 3, 10, 20]
  auto l = b.input("l", {1, 4, 5});
  auto e1 = b.add("grow", op::expand{.size = {3, 4, 5}}, l);             // [3, 4, 5]
  auto c = b.add("up1", op::conv_transpose1d{.in_channels = 4, .out_channels = 2, .kernel_size = {3}, .bias = false},
                 e1);  // [3, 2, 7]; 60 inputs x 2 channels x 3 taps
  const flop_estimate e = estimate_flops(with_metadata(b.output(h, c)));
  CHECK(e.nodes.at("up") == cost(222, 256 * 27, 2 * 256 * 27, 256, 2 * 6 * 81));
  CHECK(e.nodes.at("pad") == cost(0, 0, 0, 972, 1200));
  CHECK(e.nodes.at("tile") == cost(0, 0, 0, 1200, 2400));
  CHECK(e.nodes.at("pick") == cost(0, 0, 0, 2403, 1200));
  CHECK(e.nodes.at("grow") == cost(0, 0, 0, 20, 60));
  CHECK(e.nodes.at("up1") == cost(24, 60 * 6, 2 * 60 * 6, 60, 42));
}
