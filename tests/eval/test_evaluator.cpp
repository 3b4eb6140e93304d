// The interpreter itself: inputs, shapes, buffers, observers, errors, static graphs and the
// fake-quant casts. Kernels are checked against PyTorch in test_kernels_vs_torch.cpp.

#include <mase/eval/evaluator.hpp>
#include <mase/ir/builder.hpp>
#include <mase/ir/static_graph.hpp>
#include <mase/pass/add_common_metadata.hpp>
#include <mase/pass/init_metadata.hpp>
#include <mase/quant/quantize.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

using namespace mase;

namespace {

tensor ramp(const shape& s, float step = 0.25f, float start = -3.0f) {
  tensor t(s);
  for (std::size_t i = 0; i < t.size(); ++i) t.data()[i] = start + step * static_cast<float>(i % 29);
  return t;
}

graph small_mlp(std::int64_t batch) {
  builder b(5);
  auto x = b.input("x", {batch, 6});
  auto h = b.add("fc1", op::linear{.in_features = 6, .out_features = 5}, x);
  h = b.add("relu", op::relu{}, h);
  auto y = b.add("fc2", op::linear{.in_features = 5, .out_features = 3}, h);
  return b.output(y);
}

// y = relu(x Wᵀ + b) written out.
std::vector<float> linear_relu(const tensor& x, const tensor& w, const tensor& bias, bool relu) {
  const std::int64_t rows = x.shape()[0], in = x.shape()[1], out = w.shape()[0];
  std::vector<float> y;
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t o = 0; o < out; ++o) {
      double acc = bias.data()[o];
      for (std::int64_t i = 0; i < in; ++i) acc += static_cast<double>(x.data()[r * in + i]) * w.data()[o * in + i];
      y.push_back(relu ? std::max(0.0f, static_cast<float>(acc)) : static_cast<float>(acc));
    }
  return y;
}

}  // namespace

TEST_CASE("the evaluator runs a graph and exposes every node's results") {
  const graph g = small_mlp(4);
  evaluator ev(g);
  const tensor x = ramp({4, 6});
  const std::span<const tensor> y = ev.run({{"x", x}});
  REQUIRE(y.size() == 1);
  const tensor h = tensor({4, 5}, linear_relu(x, g.parameter("fc1.weight"), g.parameter("fc1.bias"), true));
  const std::vector<float> expected = linear_relu(h, g.parameter("fc2.weight"), g.parameter("fc2.bias"), false);
  REQUIRE(y[0].shape() == shape{4, 3});
  for (std::size_t i = 0; i < expected.size(); ++i) CHECK(y[0].data()[i] == Approx(expected[i]).margin(1e-5));
  for (std::size_t i = 0; i < h.size(); ++i) CHECK(ev.results("relu")[0]->data()[i] == Approx(h.data()[i]).margin(1e-5));
}

TEST_CASE("another batch size re-plans the shapes, the same shapes reuse the buffers") {
  const graph g = small_mlp(4);
  evaluator ev(g);
  const tensor x4 = ramp({4, 6}), x9 = ramp({9, 6}, 0.5f);
  ev.run(x4);
  const float* buffer = ev.results("fc1")[0]->data();
  ev.run(ramp({4, 6}, 0.1f));
  CHECK(ev.results("fc1")[0]->data() == buffer);  // no new allocation for the same shapes
  const tensor& y9 = ev.run(x9)[0];
  CHECK(y9.shape() == shape{9, 3});
  // Every row of the batch-9 run is right (the GEMM may block differently per batch size, so
  // the comparison is with the formula, not bit for bit with another batch size).
  const tensor h = tensor({9, 5}, linear_relu(x9, g.parameter("fc1.weight"), g.parameter("fc1.bias"), true));
  const std::vector<float> expected = linear_relu(h, g.parameter("fc2.weight"), g.parameter("fc2.bias"), false);
  for (std::size_t i = 0; i < expected.size(); ++i) CHECK(y9.data()[i] == Approx(expected[i]).margin(1e-5));
}

TEST_CASE("the observer sees every node once, in order, with what its kernel read") {
  const graph g = small_mlp(2);
  evaluator ev(g);
  std::vector<std::string> seen;
  const tensor x = ramp({2, 6});
  ev.run_with(ordered_map<tensor>{{"x", x}}, [&](const node_run& r) {
    seen.push_back(r.n.name);
    if (r.n.name == "relu") {
      REQUIRE(r.inputs.size() == 1);
      CHECK(r.inputs[0] == ev.results("fc1")[0]);
    }
  });
  CHECK(seen == std::vector<std::string>{"x", "fc1", "relu", "fc2", "output"});
}

TEST_CASE("input mistakes are errors that name the input") {
  const graph g = small_mlp(2);
  evaluator ev(g);
  const tensor x = ramp({2, 6});
  CHECK_THROWS_WITH(ev.run({{"y", x}}), Catch::Contains("\"y\" is not an input of the graph"));
  CHECK_THROWS_WITH(ev.run(ordered_map<tensor>{}), Catch::Contains("no tensor given for the graph input \"x\""));
  CHECK_THROWS_WITH(ev.run(ramp({2, 7})), Catch::Contains("node fc1"));

  builder b;
  auto p = b.input("a", {2});
  auto q = b.input("b", {2});
  const graph two = b.output(b.add("sum", op::add{}, p, q));
  evaluator ev2(two);
  CHECK_THROWS_WITH(ev2.run(ramp({2})), Catch::Contains("the graph has 2 inputs; name them"));
}

TEST_CASE("a static graph runs through its dynamic form") {
  using net = static_graph<input<"x", shape{3, 6}>,
                           layer<"fc1", op::linear{.in_features = 6, .out_features = 5}, from<"x">>,
                           layer<"relu", op::relu{}, from<"fc1">>,
                           layer<"fc2", op::linear{.in_features = 5, .out_features = 3}, from<"relu">>, result<"fc2">>;
  graph g = net::to_graph();
  const graph reference = small_mlp(3);
  for (const char* p : {"fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"}) g.parameter(p) = reference.parameter(p);
  evaluator from_static(g), from_builder(reference);
  const tensor x = ramp({3, 6});
  CHECK(from_static.run(x)[0] == from_builder.run(x)[0]);
}

TEST_CASE("fake-quant quantizes each operand its metadata names, parameters once") {
  graph g = small_mlp(2) | init_metadata | add_common_metadata;
  const fixed_fmt f{.width = 6, .frac = 3};
  node& fc1 = g[g.id("fc1")];
  std::get<tensor_meta>(fc1.meta.common.args.at("data_in_0")).precision = f;
  std::get<tensor_meta>(fc1.meta.common.args.at("weight")).precision = f;
  fc1.meta.common.results.at("data_out_0").precision = f;

  evaluator ev(g, eval_mode::fake_quant);
  const tensor x = ramp({2, 6});
  ev.run(x);
  // By hand: quantize x and W (not the bias: float32), compute, quantize the result.
  const auto q = [&](const tensor& t) {
    tensor out = t;
    quantize(format(f), t.values(), out.values());
    return out;
  };
  const tensor h({2, 5}, linear_relu(q(x), q(g.parameter("fc1.weight")), g.parameter("fc1.bias"), false));
  const tensor expected = q(h);
  const tensor& fc1_out = *ev.results("fc1")[0];
  for (std::size_t i = 0; i < expected.size(); ++i) CHECK(fc1_out.data()[i] == expected.data()[i]);
  // The graph's own parameters are untouched.
  CHECK(g.parameter("fc1.weight") == small_mlp(2).parameter("fc1.weight"));
  // float32 mode ignores the formats.
  evaluator plain(g);
  CHECK_FALSE(plain.run(x)[0] == ev.run(x)[0]);
}

TEST_CASE("a graph without an output node is reported") {
  graph g;
  g.add("x", op::placeholder{shape{2}});
  evaluator ev(g);
  CHECK_THROWS_WITH(ev.run(ramp({2})), Catch::Contains("no output node"));
}
