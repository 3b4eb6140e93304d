// raise_granularity: each fine-grained pattern as the ONNX importer writes it (constants as
// op::constant nodes, operand orders as torch 1.13 exports them, and the other common orders)
// becomes its coarse op with the right attributes and parameters, and computes what the pattern
// computed (both run by the float evaluator); near misses are left alone and reported.

#include <mase/eval/evaluator.hpp>
#include <mase/pass/add_common_metadata.hpp>
#include <mase/pass/init_metadata.hpp>
#include <mase/pass/raise_granularity.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

using namespace mase;

namespace {

// Deterministic values spread over [-scale, scale) (a 32-bit LCG; no two tests share a seed).
tensor values(const shape& s, std::uint32_t seed, float scale = 2.0f) {
  tensor t(s);
  std::uint32_t state = seed * 2654435761u + 1u;
  for (float& x : t.values()) {
    state = state * 1664525u + 1013904223u;
    x = (static_cast<float>(state >> 8) * 0x1p-24f * 2.0f - 1.0f) * scale;
  }
  return t;
}

node_id constant(graph& g, std::string name, tensor value) {
  const node_id id = g.add(std::move(name), op::constant{value.shape()});
  g.set_parameter(id, "value", std::move(value));
  return id;
}
node_id scalar(graph& g, std::string name, float value) { return constant(g, std::move(name), tensor(shape{}, {value})); }

std::vector<tensor> evaluate(const graph& g, const ordered_map<tensor>& inputs) {
  evaluator ev(g);
  const std::span<const tensor> out = ev.run(inputs);
  return {out.begin(), out.end()};
}

// The op types of the graph's nodes, in order.
std::vector<std::string> op_names(const graph& g) {
  std::vector<std::string> out;
  g.for_each_node([&](const node& n) { out.emplace_back(n.op_name()); });
  return out;
}

// |after − before| ≤ abs + rel·|before| element-wise (each test states why its bound holds).
void check_close(const std::vector<tensor>& before, const std::vector<tensor>& after, double abs, double rel) {
  REQUIRE(before.size() == after.size());
  for (std::size_t r = 0; r < before.size(); ++r) {
    REQUIRE(after[r].shape() == before[r].shape());
    double worst = 0.0;
    for (std::size_t i = 0; i < before[r].size(); ++i) {
      const double b = before[r].data()[i], a = after[r].data()[i];
      worst = std::max(worst, std::abs(a - b) - rel * std::abs(b));
    }
    CHECK(worst <= abs);
  }
}

// Runs the pass and checks the result computes what the graph computed before it.
raise_granularity_info raise_and_compare(graph& g, const ordered_map<tensor>& inputs, double abs, double rel) {
  const std::vector<tensor> before = evaluate(g, inputs);
  raise_granularity_info info = raise_granularity.run(g);
  check_close(before, evaluate(g, inputs), abs, rel);
  return info;
}

bool mentions(const raise_granularity_info& info, std::string_view pattern, std::string_view text) {
  for (const raise_near_miss& m : info.skipped)
    if (m.pattern == pattern && m.reason.find(text) != std::string::npos) return true;
  return false;
}

}  // namespace

// --- linear ------------------------------------------------------------------------------------

// A float32 dot product of length K and one add, summed in another order: the two differ by at
// most about K·2⁻²⁴·Σ|x_k·w_k| ≤ 4·6e-8·(4·2·1) ≈ 2e-6 here.
constexpr double linear_abs = 4e-6;

TEST_CASE("linear: matmul by a constant, then add(bias, ·) as torch exports it") {
  graph g;
  const node_id x = g.add("x", op::placeholder{{2, 3, 4}});
  const tensor w = values({4, 5}, 1, 1.0f);
  const tensor b = values({5}, 2);
  const node_id mm = g.add("q_MatMul", op::matmul{}, {x, constant(g, "onnx_MatMul_167", w)});
  const node_id add = g.add("q_Add", op::add{}, {constant(g, "q_bias", b), mm});
  g.add("output", op::output{}, {add});

  const auto info = raise_and_compare(g, {{"x", values({2, 3, 4}, 3)}}, linear_abs, 0.0);
  CHECK(op_names(g) == std::vector<std::string>{"placeholder", "linear", "output"});
  const node& lin = g.at("q_MatMul");
  CHECK(lin.as<op::linear>() == op::linear{.in_features = 4, .out_features = 5, .bias = true});
  const tensor& weight = g.parameter("q_MatMul.weight");
  REQUIRE(weight.shape() == shape{5, 4});
  for (int n = 0; n < 5; ++n)
    for (int k = 0; k < 4; ++k) CHECK(weight.data()[n * 4 + k] == w.data()[k * 5 + n]);
  CHECK(g.parameter("q_MatMul.bias") == b);
  REQUIRE(info.raised.size() == 1);
  CHECK(info.raised[0].pattern == "linear");
  CHECK(info.raised[0].node == "q_MatMul");
  CHECK(info.raised[0].replaced == std::vector<std::string>{"q_MatMul", "q_Add"});
  CHECK(info.skipped.empty());
  CHECK(info.sweeps == 2);
}

TEST_CASE("linear: add(y, b) order, a (1, N) bias, and a matmul without add") {
  graph g;
  const node_id x = g.add("x", op::placeholder{{3, 4}});
  const node_id mm1 = g.add("fc1", op::matmul{}, {x, constant(g, "w1", values({4, 6}, 4, 1.0f))});
  const tensor b = values({1, 6}, 5);
  const node_id h = g.add("fc1_add", op::add{}, {mm1, constant(g, "b1", b)});
  const node_id mm2 = g.add("fc2", op::matmul{}, {h, constant(g, "w2", values({6, 2}, 6, 1.0f))});
  g.add("output", op::output{}, {mm2});

  // fc2's sums have 6 terms of magnitude up to (1 + 4·2)·1.
  const auto info = raise_and_compare(g, {{"x", values({3, 4}, 7)}}, 2e-5, 0.0);
  CHECK(op_names(g) == std::vector<std::string>{"placeholder", "linear", "linear", "output"});
  CHECK(g.at("fc1").as<op::linear>().bias);
  CHECK(g.parameter("fc1.bias") == b.reshaped({6}));
  CHECK(g.at("fc2").as<op::linear>() == op::linear{.in_features = 6, .out_features = 2, .bias = false});
  CHECK(g.at("fc2").inputs == std::vector<node_id>{g.id("fc1")});
  CHECK(info.count("linear") == 2);
}

TEST_CASE("linear: a bias add that cannot be folded stays, with the reason") {
  graph g;
  const node_id x = g.add("x", op::placeholder{{2, 4}});
  const node_id mm = g.add("mm", op::matmul{}, {x, constant(g, "w", values({4, 3}, 8))});
  const node_id add = g.add("add", op::add{}, {mm, constant(g, "b", values({3}, 9))});
  const node_id mm2 = g.add("mm2", op::matmul{}, {x, constant(g, "w2", values({4, 3}, 10))});
  const node_id add2 = g.add("add2", op::add{}, {mm2, constant(g, "b2", values({2, 3}, 11))});  // per-row: not a bias
  g.add("output", op::output{}, {add, mm, add2});  // mm's result is also a graph output

  const auto info = raise_and_compare(g, {{"x", values({2, 4}, 12)}}, linear_abs, 0.0);
  CHECK(g.at("mm").is<op::linear>());
  CHECK_FALSE(g.at("mm").as<op::linear>().bias);
  CHECK(g.at("add").inputs[0] == g.id("mm"));
  CHECK_FALSE(g.at("mm2").as<op::linear>().bias);
  CHECK(g.contains("add2"));
  CHECK(mentions(info, "linear", "mm's result has 2 readers"));
  CHECK(mentions(info, "linear", "constant b2 has shape [2, 3]"));
}

TEST_CASE("linear: not a weight (3-D constant, constant on the left, two activations)") {
  graph g;
  const node_id x = g.add("x", op::placeholder{{2, 3, 4}});
  const node_id y = g.add("y", op::placeholder{{4, 5}});
  const node_id a = g.add("batched", op::matmul{}, {x, constant(g, "w3", values({2, 4, 5}, 13))});
  const node_id b = g.add("left", op::matmul{}, {constant(g, "w_left", values({3, 3}, 14)), x});
  const node_id c = g.add("dynamic", op::matmul{}, {x, y});
  g.add("output", op::output{}, {a, b, c});
  const graph before = g;
  const auto info = raise_granularity.run(g);
  CHECK(g == before);
  CHECK(info.raised.empty());
  REQUIRE(info.skipped.size() == 1);
  CHECK(info.skipped[0].node == "batched");
  CHECK_THAT(info.skipped[0].reason, Catch::Contains("2-D"));
}

// --- gelu --------------------------------------------------------------------------------------

// How the GELU is written: which product comes first, and x/√2 as a division or a product.
enum class gelu_form { x_times_h_then_half, half_x_then_h, x_times_half_h };

struct gelu_graph {
  graph g;
  node_id x;
};

gelu_graph build_gelu(gelu_form form, bool divide, float root = std::sqrt(2.0f), float one = 1.0f, float half = 0.5f) {
  gelu_graph out;
  graph& g = out.g;
  const node_id x = g.add("x", op::placeholder{{3, 17}});
  out.x = x;
  const node_id u = divide ? g.add("div", op::div{}, {x, scalar(g, "c_root", root)})
                           : g.add("div", op::mul{}, {scalar(g, "c_root", 1.0f / root), x});
  const node_id e = g.add("erf", op::erf{}, {u});
  const node_id h = g.add("add", op::add{}, {e, scalar(g, "c_one", one)});
  node_id y{};
  switch (form) {
    case gelu_form::x_times_h_then_half:
      y = g.add("mul_1", op::mul{}, {g.add("mul", op::mul{}, {x, h}), scalar(g, "c_half", half)});
      break;
    case gelu_form::half_x_then_h:
      y = g.add("mul_1", op::mul{}, {h, g.add("mul", op::mul{}, {scalar(g, "c_half", half), x})});
      break;
    case gelu_form::x_times_half_h:
      y = g.add("mul_1", op::mul{}, {x, g.add("mul", op::mul{}, {scalar(g, "c_half", half), h})});
      break;
  }
  g.add("output", op::output{}, {y});
  return out;
}

TEST_CASE("gelu: the erf form in its operand orders becomes one exact gelu") {
  const gelu_form form =
      GENERATE(gelu_form::x_times_h_then_half, gelu_form::half_x_then_h, gelu_form::x_times_half_h);
  const bool divide = GENERATE(true, false);
  CAPTURE(static_cast<int>(form), divide);
  gelu_graph built = build_gelu(form, divide);
  graph& g = built.g;
  // Both sides evaluate 0.5·x·(1 + erf(x/√2)) in float32 with |x| < 4: a few roundings of
  // values below 4, and erf's argument rounded differently (x/√2 vs x·(1/√2)): ≤ 1e-6.
  const auto info = raise_and_compare(g, {{"x", values({3, 17}, 20, 4.0f)}}, 1e-6, 1e-6);
  CHECK(op_names(g) == std::vector<std::string>{"placeholder", "gelu", "output"});
  CHECK(g.at("div").as<op::gelu>() == op::gelu{.approximate_tanh = false});  // the first node's name
  CHECK(g.at("div").inputs == std::vector<node_id>{built.x});
  REQUIRE(info.raised.size() == 1);
  CHECK(info.raised[0].replaced.size() == 5);
}

TEST_CASE("gelu: wrong constants or a second reader leave the pattern alone") {
  SECTION("a truncated sqrt(2)") {
    gelu_graph built = build_gelu(gelu_form::x_times_h_then_half, true, 1.4142f);
    const graph before = built.g;
    const auto info = raise_granularity.run(built.g);
    CHECK(built.g == before);
    CHECK(mentions(info, "gelu", "not √2"));
  }
  SECTION("adding 2 instead of 1") {
    gelu_graph built = build_gelu(gelu_form::x_times_h_then_half, true, std::sqrt(2.0f), 2.0f);
    const graph before = built.g;
    CHECK(mentions(raise_granularity.run(built.g), "gelu", "not 1"));
    CHECK(built.g == before);
  }
  SECTION("0.25 instead of 0.5") {
    gelu_graph built = build_gelu(gelu_form::x_times_h_then_half, false, std::sqrt(2.0f), 1.0f, 0.25f);
    const graph before = built.g;
    CHECK(mentions(raise_granularity.run(built.g), "gelu", "not halved"));
    CHECK(built.g == before);
  }
  SECTION("erf's result read twice") {
    gelu_graph built = build_gelu(gelu_form::half_x_then_h, true);
    graph& g = built.g;
    const node_id out = *g.output();
    g[out].inputs.push_back(g.id("erf"));
    const graph before = g;
    const auto info = raise_granularity.run(g);
    CHECK(g == before);
    CHECK(mentions(info, "gelu", "erf's result has 2 readers"));
  }
}

// --- layer_norm --------------------------------------------------------------------------------

struct norm_options {
  dims reduce{-1};
  bool square_as_mul = false;
  std::optional<tensor> gamma;
  std::optional<tensor> beta;
  float eps = 1e-5f;
};

graph build_layer_norm(const shape& in, const norm_options& o) {
  graph g;
  const node_id x = g.add("x", op::placeholder{in});
  const node_id m = g.add("ln_ReduceMean", op::mean{.dim = o.reduce, .keepdim = true}, {x});
  const node_id d = g.add("ln_Sub", op::sub{}, {x, m});
  const node_id p = o.square_as_mul ? g.add("ln_Pow", op::mul{}, {d, d}) : g.add("ln_Pow", op::pow{2.0}, {d});
  const node_id v = g.add("ln_ReduceMean_1", op::mean{.dim = o.reduce, .keepdim = true}, {p});
  const node_id a = g.add("ln_Add", op::add{}, {v, scalar(g, "ln_eps", o.eps)});
  const node_id s = g.add("ln_Sqrt", op::sqrt{}, {a});
  node_id y = g.add("ln_Div", op::div{}, {d, s});
  if (o.gamma) y = g.add("ln_Mul", op::mul{}, {y, constant(g, "ln_weight", *o.gamma)});
  if (o.beta) y = g.add("ln_Add_1", op::add{}, {y, constant(g, "ln_bias", *o.beta)});
  g.add("relu", op::relu{}, {y});
  g.add("output", op::output{}, {g.id("relu")});
  return g;
}

// Both sides compute the mean, the mean squared deviation, 1/sqrt and an affine map in float32
// over 8 to 40 values of magnitude ≤ 3: each result within a few ulp of the normalised value
// (|y| ≲ 3·|gamma| + |beta| ≲ 8), so within 5e-6.
constexpr double norm_abs = 5e-6;

TEST_CASE("layer_norm: torch's opset-13 decomposition with gamma and beta") {
  const tensor gamma = values({8}, 30, 1.5f), beta = values({8}, 31, 1.0f);
  graph g = build_layer_norm({2, 3, 8}, {.gamma = gamma, .beta = beta});
  const auto info = raise_and_compare(g, {{"x", values({2, 3, 8}, 32, 3.0f)}}, norm_abs, 0.0);
  CHECK(op_names(g) == std::vector<std::string>{"placeholder", "layer_norm", "relu", "output"});
  const op::layer_norm& ln = g.at("ln_ReduceMean").as<op::layer_norm>();
  CHECK(ln.normalized_shape == dims{8});
  CHECK(ln.eps == static_cast<double>(1e-5f));
  CHECK(ln.elementwise_affine);
  CHECK(ln.bias);
  CHECK(g.parameter("ln_ReduceMean.weight") == gamma);
  CHECK(g.parameter("ln_ReduceMean.bias") == beta);
  REQUIRE(info.raised.size() == 1);
  CHECK(info.raised[0].replaced == std::vector<std::string>{"ln_ReduceMean", "ln_Sub", "ln_Pow", "ln_ReduceMean_1",
                                                            "ln_Add", "ln_Sqrt", "ln_Div", "ln_Mul", "ln_Add_1"});
}

TEST_CASE("layer_norm: without affine, weight only, two trailing dims, d·d, broadcast gamma") {
  SECTION("no affine") {
    graph g = build_layer_norm({4, 8}, {});
    raise_and_compare(g, {{"x", values({4, 8}, 33, 3.0f)}}, norm_abs, 0.0);
    const op::layer_norm& ln = g.at("ln_ReduceMean").as<op::layer_norm>();
    CHECK_FALSE(ln.elementwise_affine);
    CHECK(g.at("ln_ReduceMean").parameters.empty());
  }
  SECTION("weight only") {
    graph g = build_layer_norm({4, 8}, {.gamma = values({8}, 34), .beta = std::nullopt});
    raise_and_compare(g, {{"x", values({4, 8}, 35, 3.0f)}}, norm_abs, 0.0);
    const op::layer_norm& ln = g.at("ln_ReduceMean").as<op::layer_norm>();
    CHECK(ln.elementwise_affine);
    CHECK_FALSE(ln.bias);
  }
  SECTION("bias only: the weight is ones") {
    const tensor beta = values({8}, 36);
    graph g = build_layer_norm({4, 8}, {.gamma = std::nullopt, .beta = beta});
    raise_and_compare(g, {{"x", values({4, 8}, 37, 3.0f)}}, norm_abs, 0.0);
    CHECK(g.parameter("ln_ReduceMean.weight") == tensor({8}, std::vector<float>(8, 1.0f)));
    CHECK(g.parameter("ln_ReduceMean.bias") == beta);
  }
  SECTION("over [-2, -1] with d·d, gamma [5, 1] broadcast over the last dim") {
    const tensor gamma = values({5, 1}, 38);
    graph g = build_layer_norm({2, 5, 8}, {.reduce = {2, -2}, .square_as_mul = true, .gamma = gamma,
                                           .beta = values({8}, 39)});
    raise_and_compare(g, {{"x", values({2, 5, 8}, 40, 3.0f)}}, norm_abs, 0.0);
    const op::layer_norm& ln = g.at("ln_ReduceMean").as<op::layer_norm>();
    CHECK(ln.normalized_shape == dims{5, 8});
    const tensor& w = g.parameter("ln_ReduceMean.weight");
    REQUIRE(w.shape() == shape{5, 8});
    for (int r = 0; r < 5; ++r)
      for (int c = 0; c < 8; ++c) CHECK(w.data()[r * 8 + c] == gamma.data()[r]);
  }
}

TEST_CASE("layer_norm: near misses") {
  SECTION("a mean over a leading dimension is not a layer norm") {
    graph g = build_layer_norm({4, 8}, {.reduce = {0}, .gamma = std::nullopt, .beta = std::nullopt});
    const graph before = g;
    CHECK(raise_granularity.run(g).raised.empty());
    CHECK(g == before);
  }
  SECTION("x − mean read elsewhere") {
    graph g = build_layer_norm({4, 8}, {});
    g[*g.output()].inputs.push_back(g.id("ln_Sub"));
    const graph before = g;
    const auto info = raise_granularity.run(g);
    CHECK(g == before);
    CHECK(mentions(info, "layer_norm", "ln_Sub = x − mean has 3 readers"));
  }
  SECTION("a non-scalar eps") {
    graph g = build_layer_norm({4, 8}, {});
    const node_id eps = g.id("ln_eps");
    g[eps].op = op::constant{{8}};
    g.set_parameter(eps, "value", tensor({8}, std::vector<float>(8, 1e-5f)));
    const graph before = g;
    const auto info = raise_granularity.run(g);
    CHECK(g == before);
    CHECK(mentions(info, "layer_norm", "eps"));
  }
  SECTION("a per-row gamma stays a separate mul") {
    graph g = build_layer_norm({3, 8}, {.gamma = values({3, 1}, 41), .beta = values({8}, 42)});
    const auto info = raise_and_compare(g, {{"x", values({3, 8}, 43, 3.0f)}}, norm_abs, 0.0);
    CHECK(op_names(g) == std::vector<std::string>{"placeholder", "layer_norm", "constant", "mul", "constant", "add",
                                                  "relu", "output"});
    CHECK_FALSE(g.at("ln_ReduceMean").as<op::layer_norm>().elementwise_affine);
    CHECK(mentions(info, "layer_norm", "does not broadcast into normalized_shape [8]"));
  }
}

// --- silu --------------------------------------------------------------------------------------

TEST_CASE("silu: x·sigmoid(x) in either order, not with a second reader or another x") {
  graph g;
  const node_id x = g.add("x", op::placeholder{{2, 9}});
  const node_id y = g.add("y", op::placeholder{{2, 9}});
  const node_id a = g.add("a", op::mul{}, {x, g.add("sig_a", op::sigmoid{}, {x})});
  const node_id b = g.add("b", op::mul{}, {g.add("sig_b", op::sigmoid{}, {a}), a});
  const node_id s = g.add("sig_c", op::sigmoid{}, {b});
  const node_id c = g.add("c", op::mul{}, {b, s});
  const node_id d = g.add("d", op::mul{}, {y, g.add("sig_d", op::sigmoid{}, {x})});  // y·sigmoid(x)
  g.add("output", op::output{}, {c, s, d});
  // The silu kernel computes x/(1 + e^-x), the pattern x·(1/(1 + e^-x)): one rounding apart,
  // compounded through three layers of values below 2.
  const auto info = raise_and_compare(g, {{"x", values({2, 9}, 50)}, {"y", values({2, 9}, 51)}}, 1e-6, 1e-6);
  CHECK(g.at("sig_a").is<op::silu>());
  CHECK(g.at("sig_b").is<op::silu>());
  CHECK(g.at("sig_b").inputs == std::vector<node_id>{g.id("sig_a")});
  CHECK(g.at("c").is<op::mul>());
  CHECK(g.at("d").is<op::mul>());
  CHECK(info.count("silu") == 2);
  CHECK(mentions(info, "silu", "sig_c's result has 2 readers"));
}

// --- attention ---------------------------------------------------------------------------------

struct attention_options {
  bool key_transpose = false;  // k [B,H,S,E] transposed by transpose(-2, -1), else a permute of [B,S,H,E]
  enum { div_scores, mul_scores, mul_query } scaling = div_scores;
  std::int64_t softmax_dim = -1;
  bool weights_output = false;  // the attention weights are a graph output too
};

graph build_attention(const attention_options& o) {
  graph g;
  const node_id q = g.add("q", op::placeholder{{2, 2, 8, 16}});
  const node_id k = g.add("k", op::placeholder{o.key_transpose ? shape{2, 2, 6, 16} : shape{2, 6, 2, 16}});
  const node_id v = g.add("v", op::placeholder{{2, 2, 6, 12}});
  const node_id kt = o.key_transpose ? g.add("k_T", op::transpose{.dim0 = -2, .dim1 = -1}, {k})
                                     : g.add("k_T", op::permute{{0, 2, 3, 1}}, {k});
  node_id query = q;
  if (o.scaling == attention_options::mul_query) query = g.add("q_scaled", op::mul{}, {q, scalar(g, "c", 0.25f)});
  node_id scores = g.add("MatMul", op::matmul{}, {query, kt});
  if (o.scaling == attention_options::div_scores) scores = g.add("Div", op::div{}, {scores, scalar(g, "c", 4.0f)});
  if (o.scaling == attention_options::mul_scores) scores = g.add("Mul", op::mul{}, {scalar(g, "c", 0.25f), scores});
  const node_id p = g.add("Softmax", op::softmax{o.softmax_dim}, {scores});
  const node_id y = g.add("MatMul_1", op::matmul{}, {p, v});
  if (o.weights_output) g.add("output", op::output{}, {y, p});
  else g.add("output", op::output{}, {y});
  return g;
}

ordered_map<tensor> attention_inputs(bool key_transpose) {
  ordered_map<tensor> in;
  in.insert_or_assign("q", values({2, 2, 8, 16}, 60));
  in.insert_or_assign("k", values(key_transpose ? shape{2, 2, 6, 16} : shape{2, 6, 2, 16}, 61));
  in.insert_or_assign("v", values({2, 2, 6, 12}, 62));
  return in;
}

// Scores are float32 dot products of 16 terms below 4 (≤ 64·16·2⁻²⁴ ≈ 6e-5 apart after the
// scale 1/4, in the worst case); the softmax weights move by about that much relatively, and the
// outputs are averages of values below 2: ≤ 2e-5 apart.
constexpr double attention_abs = 2e-5;

TEST_CASE("attention: matmul(q, kᵀ) / √E → softmax → matmul(·, v), as torch 1.13 exports it") {
  graph g = build_attention({});
  const auto info = raise_and_compare(g, attention_inputs(false), attention_abs, 0.0);
  CHECK(op_names(g) == std::vector<std::string>{"placeholder", "placeholder", "placeholder", "permute",
                                                "scaled_dot_product_attention", "output"});
  const node& a = g.at("MatMul");
  CHECK(a.as<op::scaled_dot_product_attention>() ==
        op::scaled_dot_product_attention{.dropout_p = 0.0, .is_causal = false, .scale = 0.25});
  CHECK(a.inputs == std::vector<node_id>{g.id("q"), g.id("k_T"), g.id("v")});
  CHECK(g.at("k_T").as<op::permute>() == op::permute{{0, 2, 1, 3}});  // k as [B, H, S, E]
  REQUIRE(info.raised.size() == 1);
  CHECK(info.raised[0].replaced == std::vector<std::string>{"MatMul", "Div", "Softmax", "MatMul_1"});
  CHECK_THAT(info.raised[0].detail, Catch::Contains("scale 0.25"));
}

TEST_CASE("attention: a transposed key is dropped, a scale on q or on the scores by mul") {
  const bool key_transpose = GENERATE(true, false);
  const auto scaling = GENERATE(attention_options::mul_scores, attention_options::mul_query);
  CAPTURE(key_transpose, static_cast<int>(scaling));
  graph g = build_attention({.key_transpose = key_transpose, .scaling = scaling});
  raise_and_compare(g, attention_inputs(key_transpose), attention_abs, 0.0);
  const node& a = g.at("MatMul");  // named after q·kᵀ, not the scale or the transpose before it
  CHECK(a.as<op::scaled_dot_product_attention>().scale == 0.25);
  CHECK(g[a.inputs[0]].name == "q");
  CHECK(g[a.inputs[1]].name == (key_transpose ? "k" : "k_T"));
  CHECK_FALSE(g.contains("c"));  // the scale constant went with the pattern
  if (key_transpose) CHECK_FALSE(g.contains("k_T"));
}

TEST_CASE("attention: near misses") {
  SECTION("softmax over another dimension") {
    graph g = build_attention({.softmax_dim = -2});
    const graph before = g;
    CHECK(raise_granularity.run(g).raised.empty());
    CHECK(g == before);
  }
  SECTION("the attention weights are read elsewhere") {
    graph g = build_attention({.weights_output = true});
    const graph before = g;
    const auto info = raise_granularity.run(g);
    CHECK(g == before);
    CHECK(mentions(info, "scaled_dot_product_attention", "Softmax's result has 2 readers"));
  }
  SECTION("the key is not transposed by a permute or transpose") {
    graph g;
    const node_id q = g.add("q", op::placeholder{{8, 16}});
    const node_id kt = g.add("kt", op::placeholder{{16, 6}});
    const node_id v = g.add("v", op::placeholder{{6, 4}});
    const node_id p = g.add("p", op::softmax{-1}, {g.add("s", op::matmul{}, {q, kt})});
    g.add("output", op::output{}, {g.add("y", op::matmul{}, {p, v})});
    const graph before = g;
    const auto info = raise_granularity.run(g);
    CHECK(g == before);
    CHECK(mentions(info, "scaled_dot_product_attention", "not a permute or transpose"));
  }
}

// --- together ----------------------------------------------------------------------------------

// matmul+add → (x·sigmoid(x)) → the erf GELU of that → matmul+add → residual add.
graph feed_forward_block() {
  graph g;
  const node_id x = g.add("x", op::placeholder{{2, 4, 8}});
  node_id h = g.add("ff1_MatMul", op::matmul{}, {x, constant(g, "w1", values({8, 16}, 70, 0.5f))});
  h = g.add("ff1_Add", op::add{}, {constant(g, "b1", values({16}, 71, 0.5f)), h});
  // SiLU inside a GELU: gelu(silu(h)).
  const node_id sx = g.add("silu_Mul", op::mul{}, {h, g.add("silu_Sigmoid", op::sigmoid{}, {h})});
  const node_id u = g.add("Div", op::div{}, {sx, scalar(g, "root2", std::sqrt(2.0f))});
  const node_id e = g.add("Add_1", op::add{}, {g.add("Erf", op::erf{}, {u}), scalar(g, "one", 1.0f)});
  h = g.add("Mul_1", op::mul{}, {g.add("Mul", op::mul{}, {sx, e}), scalar(g, "half", 0.5f)});
  h = g.add("ff2_MatMul", op::matmul{}, {h, constant(g, "w2", values({16, 8}, 72, 0.5f))});
  h = g.add("ff2_Add", op::add{}, {constant(g, "b2", values({8}, 73, 0.5f)), h});
  g.add("output", op::output{}, {g.add("res", op::add{}, {x, h})});
  return g;
}

TEST_CASE("a feed-forward block raises to a fixed point and runs in a pipeline") {
  graph g = feed_forward_block();
  // Sums of 8 and 16 float32 terms below 2 through smooth activations: ≤ 1e-5.
  const auto info = raise_and_compare(g, {{"x", values({2, 4, 8}, 74)}}, 1e-5, 1e-6);
  CHECK(op_names(g) == std::vector<std::string>{"placeholder", "linear", "silu", "gelu", "linear", "add", "output"});
  CHECK(info.count("linear") == 2);
  CHECK(info.count("silu") == 1);
  CHECK(info.count("gelu") == 1);
  CHECK(info.skipped.empty());
  CHECK(g.at("Div").inputs == std::vector<node_id>{g.id("silu_Sigmoid")});
  CHECK(g.at("ff2_MatMul").inputs == std::vector<node_id>{g.id("Div")});

  // As a pipeline stage: its info comes back, and the raised graph takes metadata.
  const auto result = run(feed_forward_block(), raise_granularity);
  CHECK(result.get<raise_granularity_info>() == info);
  auto annotated = feed_forward_block() | raise_granularity | init_metadata | add_common_metadata;
  CHECK(annotated.at("ff2_MatMul").meta.common.results.at("data_out_0").shape == shape{2, 4, 8});
  static_assert(!detail::contains_fact<fact::common_metadata,
                                       decltype(std::move(annotated) | raise_granularity)::established>::value,
                "new nodes have no metadata");
}
