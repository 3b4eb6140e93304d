// The bit-exact evaluator against an integer reference written plainly here: int64 codes,
// exact dot products, the hardware's floor shift and saturation, from MASE's RTL description
// (DeepWok/mase at ae4660b1: src/mase_components/cast/rtl/fixed_signed_cast.sv and
// linear_layers/fixed_linear_layer/rtl/fixed_linear.sv), independent of eval/bit_exact.hpp's code paths.

#include <mase/core/dispatch.hpp>
#include <mase/eval/evaluator.hpp>
#include <mase/eval/kernels/integer_gemm.hpp>
#include <mase/ir/builder.hpp>
#include <mase/pass/add_common_metadata.hpp>
#include <mase/pass/init_metadata.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

using namespace mase;

namespace {

// --- the reference ----------------------------------------------------------------------------

std::int64_t floor_div_pow2(std::int64_t v, int shift) {  // floor(v / 2^shift), written without >>
  const std::int64_t d = std::int64_t{1} << shift;
  std::int64_t q = v / d;
  if (v % d != 0 && v < 0) --q;
  return q;
}

std::int64_t saturate(std::int64_t v, int width) {
  const std::int64_t hi = (std::int64_t{1} << (width - 1)) - 1, lo = -(std::int64_t{1} << (width - 1));
  return v < lo ? lo : v > hi ? hi : v;
}

// MASE's software quantizer for the graph's inputs and the weights: round half to even, saturate.
std::int64_t quantize_code(float x, int width, int frac) {
  const double scaled = std::ldexp(static_cast<double>(x), frac);
  double r = std::floor(scaled);
  const double rest = scaled - r;
  if (rest > 0.5 || (rest == 0.5 && std::fmod(r, 2.0) != 0)) r += 1;
  return saturate(static_cast<std::int64_t>(r), width);
}

// Rescale a raw value from `from` fraction bits to `to` (floor when dropping bits), then saturate.
std::int64_t hardware_cast(std::int64_t raw, int from, int to, int width) {
  const std::int64_t v = from >= to ? floor_div_pow2(raw, from - to) : raw * (std::int64_t{1} << (to - from));
  return saturate(v, width);
}

struct fixed_spec {
  int width, frac;
};

// Linear layer in codes: y = cast(Σ x·w + align(b)).
std::vector<std::int64_t> reference_linear(const std::vector<std::int64_t>& x, int rows, int in,
                                           const std::vector<std::int64_t>& w, int out,
                                           const std::vector<std::int64_t>* b, fixed_spec xs, fixed_spec ws,
                                           fixed_spec bs, fixed_spec ys) {
  std::vector<std::int64_t> y(static_cast<std::size_t>(rows * out));
  const int acc_frac = xs.frac + ws.frac;
  for (int r = 0; r < rows; ++r)
    for (int o = 0; o < out; ++o) {
      std::int64_t acc = 0;
      for (int i = 0; i < in; ++i) acc += x[static_cast<std::size_t>(r * in + i)] * w[static_cast<std::size_t>(o * in + i)];
      if (b) {
        const std::int64_t braw = (*b)[static_cast<std::size_t>(o)];
        acc += bs.frac > acc_frac ? floor_div_pow2(braw, bs.frac - acc_frac) : braw * (std::int64_t{1} << (acc_frac - bs.frac));
      }
      y[static_cast<std::size_t>(r * out + o)] = hardware_cast(acc, acc_frac, ys.frac, ys.width);
    }
  return y;
}

// --- helpers ----------------------------------------------------------------------------------

tensor random_tensor(const shape& s, std::uint64_t seed, float scale) {
  tensor t(s);
  std::uint64_t state = seed;
  for (float& v : t.values()) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    v = (static_cast<float>(state >> 40) * 0x1p-24f * 2.0f - 1.0f) * scale;
  }
  return t;
}

void set_format(node& n, std::string_view entry, const fixed_fmt& f) {
  if (entry.starts_with("data_out")) {
    n.meta.common.results.at(entry).precision = f;
  } else {
    std::get<tensor_meta>(n.meta.common.args.at(entry)).precision = f;
  }
}

std::vector<std::int64_t> codes_of(const tensor& t, int frac) {
  std::vector<std::int64_t> c;
  for (float v : t.values()) {
    const double scaled = std::ldexp(static_cast<double>(v), frac);
    REQUIRE(scaled == std::floor(scaled));  // every bit-exact value is on its format's grid
    c.push_back(static_cast<std::int64_t>(scaled));
  }
  return c;
}

std::vector<std::int64_t> quantized_codes(const tensor& t, fixed_spec s) {
  std::vector<std::int64_t> c;
  for (float v : t.values()) c.push_back(quantize_code(v, s.width, s.frac));
  return c;
}

struct linear_case {
  int in, out, rows;
  fixed_spec x, w, b, y;
  bool bias;
  const char* accumulator;
  int accumulator_bits;  // W_x + W_w + ceil(log2 K) (+1 with a bias), or the aligned bias's width + 1 when wider
};

// One linear layer ("fc") of the case's sizes and formats, its weights drawn at `weight_scale`.
graph linear_graph(const linear_case& c, float weight_scale) {
  builder bld(7);
  auto x = bld.input("x", {c.rows, c.in});
  auto fc = bld.add("fc", op::linear{.in_features = c.in, .out_features = c.out, .bias = c.bias}, x);
  graph g = bld.output(fc) | init_metadata | add_common_metadata;
  g.parameter("fc.weight") = random_tensor({c.out, c.in}, 11, weight_scale);
  if (c.bias) g.parameter("fc.bias") = random_tensor({c.out}, 12, 5.0f);
  node& n = g[g.id("fc")];
  set_format(n, "data_in_0", {.width = c.x.width, .frac = c.x.frac});
  set_format(n, "weight", {.width = c.w.width, .frac = c.w.frac});
  if (c.bias) set_format(n, "bias", {.width = c.b.width, .frac = c.b.frac});
  set_format(n, "data_out_0", {.width = c.y.width, .frac = c.y.frac});
  return g;
}

// reference_linear's codes for linear_graph(c) on `input`.
std::vector<std::int64_t> expected_linear(const graph& g, const linear_case& c, const tensor& input) {
  std::vector<std::int64_t> bc;
  if (c.bias) bc = quantized_codes(g.parameter("fc.bias"), c.b);
  return reference_linear(quantized_codes(input, c.x), c.rows, c.in, quantized_codes(g.parameter("fc.weight"), c.w),
                          c.out, c.bias ? &bc : nullptr, c.x, c.w, c.b, c.y);
}

}  // namespace

TEST_CASE("bit-exact linear equals the integer reference for every accumulator type") {
  const linear_case cases[] = {
      // K = 16: 4+4+4+1 = 13 bits -> float
      {16, 8, 5, {4, 2}, {4, 3}, {6, 3}, {6, 2}, true, "float", 13},
      // K = 784, 8x8: 8+8+10+1 = 27 bits -> double; bias frac below the accumulator's
      {784, 12, 4, {8, 3}, {8, 5}, {8, 4}, {8, 3}, true, "double", 27},
      // bias with more fraction bits than the accumulator: truncated (floor)
      {20, 6, 3, {6, 1}, {6, 2}, {12, 9}, {7, 2}, true, "float", 18},
      // 24x24-bit operands: 48+5+1 = 54 bits -> int64
      {24, 4, 2, {24, 12}, {24, 20}, {16, 8}, {16, 4}, true, "int64", 54},
      // no bias, output wider than the accumulator (no saturation; a left shift)
      {10, 3, 2, {5, 2}, {5, 2}, {8, 4}, {20, 6}, false, "float", 14},
  };
  for (const linear_case& c : cases) {
    DYNAMIC_SECTION("K=" << c.in << " accumulator " << c.accumulator) {
      const graph g = linear_graph(c, 3.0f);  // weights large enough that some outputs saturate
      evaluator ev(g, eval_mode::bit_exact);
      REQUIRE(ev.runs_bit_exact(g.id("fc")));
      const tensor input = random_tensor({c.rows, c.in}, 13, 4.0f);
      const auto expected = expected_linear(g, c, input);
      CHECK(codes_of(ev.run(input)[0], c.y.frac) == expected);

      // The lowering the emitter renders holds the reference's numbers.
      const auto wc = quantized_codes(g.parameter("fc.weight"), c.w);
      std::vector<std::int64_t> bc;
      if (c.bias) bc = quantized_codes(g.parameter("fc.bias"), c.b);
      const eval::fixed_lowering* lowered = ev.lowering(g.id("fc"));
      REQUIRE(lowered != nullptr);
      CHECK(lowered->kind == eval::lowering_kind::dot_product);
      CHECK(lowered->accumulator_width == c.accumulator_bits);
      CHECK(eval::to_string(eval::accumulator_for(lowered->accumulator_width)) == c.accumulator);
      CHECK(lowered->weight_codes == wc);
      std::vector<std::int64_t> aligned;
      const int acc_frac = c.x.frac + c.w.frac;
      for (std::int64_t b : bc)
        aligned.push_back(c.b.frac > acc_frac ? floor_div_pow2(b, c.b.frac - acc_frac)
                                              : b * (std::int64_t{1} << (acc_frac - c.b.frac)));
      CHECK(lowered->aligned_bias == aligned);
      // Saturation happened somewhere in the saturating cases (else the case tests less than it says).
      if (c.y.width <= 10) {
        const std::int64_t hi = (std::int64_t{1} << (c.y.width - 1)) - 1;
        CHECK(std::count_if(expected.begin(), expected.end(), [&](std::int64_t v) { return v == hi || v == -hi - 1; }) > 0);
      }
    }
  }
}

TEST_CASE("bit-exact two-layer MLP: relu exact on codes, casts between layers floor and saturate") {
  builder bld(3);
  auto x = bld.input("x", {6, 12});
  auto h = bld.add("fc1", op::linear{.in_features = 12, .out_features = 10}, x);
  h = bld.add("relu", op::relu{}, h);
  auto y = bld.add("fc2", op::linear{.in_features = 10, .out_features = 4}, h);
  graph g = bld.output(y) | init_metadata | add_common_metadata;
  const fixed_spec in{8, 4}, w{8, 6}, b{8, 5}, mid{10, 5}, relu_in{8, 3}, out{8, 4};
  node& fc1 = g[g.id("fc1")];
  set_format(fc1, "data_in_0", {.width = in.width, .frac = in.frac});
  set_format(fc1, "weight", {.width = w.width, .frac = w.frac});
  set_format(fc1, "bias", {.width = b.width, .frac = b.frac});
  set_format(fc1, "data_out_0", {.width = mid.width, .frac = mid.frac});
  node& relu = g[g.id("relu")];
  // relu reads 8/3 while fc1 produces 10/5: the hardware casts in between (floor, saturate).
  set_format(relu, "data_in_0", {.width = relu_in.width, .frac = relu_in.frac});
  set_format(relu, "data_out_0", {.width = relu_in.width, .frac = relu_in.frac});
  node& fc2 = g[g.id("fc2")];
  set_format(fc2, "data_in_0", {.width = relu_in.width, .frac = relu_in.frac});
  set_format(fc2, "weight", {.width = w.width, .frac = w.frac});
  set_format(fc2, "bias", {.width = b.width, .frac = b.frac});
  set_format(fc2, "data_out_0", {.width = out.width, .frac = out.frac});

  evaluator ev(g, eval_mode::bit_exact);
  const tensor input = random_tensor({6, 12}, 5, 3.0f);
  const tensor& result = ev.run(input)[0];

  const auto w1 = quantized_codes(g.parameter("fc1.weight"), w), b1 = quantized_codes(g.parameter("fc1.bias"), b);
  const auto w2 = quantized_codes(g.parameter("fc2.weight"), w), b2 = quantized_codes(g.parameter("fc2.bias"), b);
  auto h1 = reference_linear(quantized_codes(input, in), 6, 12, w1, 10, &b1, in, w, b, mid);
  for (std::int64_t& v : h1) v = std::max<std::int64_t>(0, hardware_cast(v, mid.frac, relu_in.frac, relu_in.width));
  const auto expected = reference_linear(h1, 6, 10, w2, 4, &b2, relu_in, w, b, out);
  CHECK(codes_of(result, out.frac) == expected);
}

TEST_CASE("bit-exact conv2d equals a direct integer convolution") {
  const int n = 2, c = 4, h = 7, wd = 6, o = 6, k = 3, stride = 2, pad = 1, groups = 2;
  builder bld(9);
  auto x = bld.input("x", {n, c, h, wd});
  auto conv = bld.add("conv", op::conv2d{.in_channels = c, .out_channels = o, .kernel_size = {k}, .stride = {stride},
                                         .padding = {pad}, .groups = groups},
                      x);
  graph g = bld.output(conv) | init_metadata | add_common_metadata;
  g.parameter("conv.weight") = random_tensor({o, c / groups, k, k}, 21, 2.0f);
  g.parameter("conv.bias") = random_tensor({o}, 22, 2.0f);
  const fixed_spec xs{8, 4}, ws{8, 6}, bs{8, 3}, ys{8, 3};
  node& nd = g[g.id("conv")];
  set_format(nd, "data_in_0", {.width = xs.width, .frac = xs.frac});
  set_format(nd, "weight", {.width = ws.width, .frac = ws.frac});
  set_format(nd, "bias", {.width = bs.width, .frac = bs.frac});
  set_format(nd, "data_out_0", {.width = ys.width, .frac = ys.frac});
  evaluator ev(g, eval_mode::bit_exact);
  REQUIRE(ev.runs_bit_exact(g.id("conv")));
  const tensor input = random_tensor({n, c, h, wd}, 23, 6.0f);
  const tensor& y = ev.run(input)[0];

  const auto xc = quantized_codes(input, xs);
  const auto wc = quantized_codes(g.parameter("conv.weight"), ws);
  const auto bc = quantized_codes(g.parameter("conv.bias"), bs);
  const int ho = (h + 2 * pad - k) / stride + 1, wo = (wd + 2 * pad - k) / stride + 1;
  REQUIRE(y.shape() == shape{n, o, ho, wo});
  std::vector<std::int64_t> expected;
  const int cg = c / groups, og = o / groups, acc_frac = xs.frac + ws.frac;
  for (int b = 0; b < n; ++b)
    for (int oc = 0; oc < o; ++oc)
      for (int i = 0; i < ho; ++i)
        for (int j = 0; j < wo; ++j) {
          std::int64_t acc = 0;
          const int group = oc / og;
          for (int ic = 0; ic < cg; ++ic)
            for (int ki = 0; ki < k; ++ki)
              for (int kj = 0; kj < k; ++kj) {
                const int r = i * stride - pad + ki, s = j * stride - pad + kj;
                if (r < 0 || r >= h || s < 0 || s >= wd) continue;
                const int channel = group * cg + ic;
                acc += xc[static_cast<std::size_t>(((b * c + channel) * h + r) * wd + s)] *
                       wc[static_cast<std::size_t>(((oc * cg + ic) * k + ki) * k + kj)];
              }
          acc += bc[static_cast<std::size_t>(oc)] * (std::int64_t{1} << (acc_frac - bs.frac));
          expected.push_back(hardware_cast(acc, acc_frac, ys.frac, ys.width));
        }
  CHECK(codes_of(y, ys.frac) == expected);
}

TEST_CASE("bit-exact matmul, add and mul") {
  builder bld(1);
  auto a = bld.input("a", {3, 5});
  auto b = bld.input("b", {5, 4});
  auto c = bld.input("c", {3, 4});
  auto m = bld.add("mm", op::matmul{}, a, b);
  auto s = bld.add("sum", op::add{}, m, c);
  auto p = bld.add("prod", op::mul{}, s, c);
  graph g = bld.output(p) | init_metadata | add_common_metadata;
  const fixed_spec as{6, 3}, bs{7, 5}, mm_out{9, 4}, cs{6, 2}, sum_out{8, 2}, prod_out{8, 1};
  node& mm = g[g.id("mm")];
  set_format(mm, "data_in_0", {.width = as.width, .frac = as.frac});
  set_format(mm, "data_in_1", {.width = bs.width, .frac = bs.frac});
  set_format(mm, "data_out_0", {.width = mm_out.width, .frac = mm_out.frac});
  node& sum = g[g.id("sum")];
  set_format(sum, "data_in_0", {.width = mm_out.width, .frac = mm_out.frac});
  set_format(sum, "data_in_1", {.width = cs.width, .frac = cs.frac});
  set_format(sum, "data_out_0", {.width = sum_out.width, .frac = sum_out.frac});
  node& prod = g[g.id("prod")];
  set_format(prod, "data_in_0", {.width = sum_out.width, .frac = sum_out.frac});
  set_format(prod, "data_in_1", {.width = cs.width, .frac = cs.frac});
  set_format(prod, "data_out_0", {.width = prod_out.width, .frac = prod_out.frac});
  evaluator ev(g, eval_mode::bit_exact);
  for (const char* name : {"mm", "sum", "prod"}) CHECK(ev.runs_bit_exact(g.id(name)));
  const tensor ta = random_tensor({3, 5}, 31, 3.0f), tb = random_tensor({5, 4}, 32, 1.5f), tc = random_tensor({3, 4}, 33, 9.0f);
  const tensor& y = ev.run({{"a", ta}, {"b", tb}, {"c", tc}})[0];

  const auto ac = quantized_codes(ta, as), bc = quantized_codes(tb, bs), cc = quantized_codes(tc, cs);
  std::vector<std::int64_t> expected;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j) {
      std::int64_t acc = 0;
      for (int k = 0; k < 5; ++k) acc += ac[static_cast<std::size_t>(i * 5 + k)] * bc[static_cast<std::size_t>(k * 4 + j)];
      const std::int64_t mmv = hardware_cast(acc, as.frac + bs.frac, mm_out.frac, mm_out.width);
      const std::int64_t cv = cc[static_cast<std::size_t>(i * 4 + j)];
      // sum at frac 4: c (frac 2) shifted up 2 bits
      const std::int64_t sv = hardware_cast(mmv + cv * 4, mm_out.frac, sum_out.frac, sum_out.width);
      expected.push_back(hardware_cast(sv * cv, sum_out.frac + cs.frac, prod_out.frac, prod_out.width));
    }
  CHECK(codes_of(y, prod_out.frac) == expected);
}

TEST_CASE("bit-exact activations are lookup tables of the quantized function, on every target") {
  // 8-bit codes fill the AVX-512 kernel's registers; 5-bit codes leave them mostly padding. Every
  // input code once, then three more, so that the vector loops end in a partial vector.
  for (const int width : {8, 5}) {
    const int codes = 1 << width, count = codes + 3, frac = width - 4;
    builder bld(1);
    auto x = bld.input("x", {count});
    auto s = bld.add("sig", op::sigmoid{}, x);
    graph g = bld.output(s) | init_metadata | add_common_metadata;
    node& n = g[g.id("sig")];
    set_format(n, "data_in_0", {.width = width, .frac = frac});
    set_format(n, "data_out_0", {.width = 8, .frac = 7});
    tensor input({count});
    for (int i = 0; i < count; ++i) input.data()[i] = static_cast<float>(std::ldexp(i % codes - codes / 2, -frac));
    for (const dispatch::target t : {dispatch::target::baseline, dispatch::target::x86_64_v3, dispatch::target::x86_64_v4}) {
      if (!dispatch::supports(t)) continue;
      INFO("input width " << width << ", target " << static_cast<int>(t));
      const dispatch::target previous = dispatch::limit(t);
      evaluator ev(g, eval_mode::bit_exact);
      REQUIRE(ev.runs_bit_exact(g.id("sig")));
      const auto y = codes_of(ev.run(input)[0], 7);
      dispatch::limit(previous);
      const eval::fixed_lowering* lowered = ev.lowering(g.id("sig"));
      REQUIRE(lowered != nullptr);
      REQUIRE(lowered->kind == eval::lowering_kind::lookup_table);
      REQUIRE(lowered->table.size() == static_cast<std::size_t>(codes));  // the table the emitter writes into the LUT's ROM
      for (int i = 0; i < count; ++i) {
        const int c = i % codes - codes / 2;
        const double f = 1.0 / (1.0 + std::exp(-std::ldexp(c, -frac)));
        INFO("code " << c);
        CHECK(y[static_cast<std::size_t>(i)] == quantize_code(static_cast<float>(f), 8, 7));
        CHECK(lowered->table[static_cast<std::size_t>(c + codes / 2)] == quantize_code(static_cast<float>(f), 8, 7));
      }
    }
  }
}

TEST_CASE("hardware_cast_raw is floor then saturate, for every code of small formats") {
  for (int from_frac = 0; from_frac <= 6; ++from_frac)
    for (int to_frac = 0; to_frac <= 6; ++to_frac)
      for (int width = 2; width <= 6; ++width)
        for (std::int64_t raw = -300; raw <= 300; ++raw) {
          const fixed_fmt to{.width = width, .frac = to_frac};
          const double exact = std::ldexp(static_cast<double>(raw), to_frac - from_frac);
          const std::int64_t expected = saturate(static_cast<std::int64_t>(std::floor(exact)), width);
          REQUIRE(eval::hardware_cast_raw(raw, from_frac, to) == expected);
        }
}

TEST_CASE("the accumulator type follows the width the formats need") {
  CHECK(eval::dot_product_accumulator_width({.width = 8, .frac = 3}, {.width = 8, .frac = 3}, 784, true) == 27);
  CHECK(eval::dot_product_accumulator_width({.width = 8, .frac = 3}, {.width = 8, .frac = 3}, 64, false) == 22);
  CHECK(eval::accumulator_for(24) == eval::accumulator_type::float32);
  CHECK(eval::accumulator_for(25) == eval::accumulator_type::float64);
  CHECK(eval::accumulator_for(54) == eval::accumulator_type::int64);
}

namespace {

struct conv_case {
  int n, c, h, w, o, kernel, stride, pad, dilation, groups;
  fixed_spec x, wt, b, y;
  bool one_dimensional = false;  // conv1d over [n, c, w] (h = 1)
};

// A direct integer convolution: zero padding, stride, dilation and groups as PyTorch defines them.
std::vector<std::int64_t> reference_conv(const conv_case& cc, const std::vector<std::int64_t>& xc,
                                         const std::vector<std::int64_t>& wc, const std::vector<std::int64_t>& bc) {
  const int kh = cc.one_dimensional ? 1 : cc.kernel, kw = cc.kernel;
  const int pad_h = cc.one_dimensional ? 0 : cc.pad, stride_h = cc.one_dimensional ? 1 : cc.stride;
  const int ho = (cc.h + 2 * pad_h - cc.dilation * (kh - 1) - 1) / stride_h + 1;
  const int wo = (cc.w + 2 * cc.pad - cc.dilation * (kw - 1) - 1) / cc.stride + 1;
  const int cg = cc.c / cc.groups, og = cc.o / cc.groups, acc_frac = cc.x.frac + cc.wt.frac;
  std::vector<std::int64_t> y;
  for (int b = 0; b < cc.n; ++b)
    for (int oc = 0; oc < cc.o; ++oc)
      for (int i = 0; i < ho; ++i)
        for (int j = 0; j < wo; ++j) {
          std::int64_t acc = 0;
          for (int ic = 0; ic < cg; ++ic)
            for (int ki = 0; ki < kh; ++ki)
              for (int kj = 0; kj < kw; ++kj) {
                const int r = i * stride_h - pad_h + ki * cc.dilation, s = j * cc.stride - cc.pad + kj * cc.dilation;
                if (r < 0 || r >= cc.h || s < 0 || s >= cc.w) continue;
                const int channel = oc / og * cg + ic;
                acc += xc[static_cast<std::size_t>(((b * cc.c + channel) * cc.h + r) * cc.w + s)] *
                       wc[static_cast<std::size_t>(((oc * cg + ic) * kh + ki) * kw + kj)];
              }
          acc += bc[static_cast<std::size_t>(oc)] * (std::int64_t{1} << (acc_frac - cc.b.frac));
          y.push_back(hardware_cast(acc, acc_frac, cc.y.frac, cc.y.width));
        }
  return y;
}

// Restores the cap on the integer products' target when a test ends.
struct isa_cap_guard {
  eval::integer_gemm::isa previous;
  explicit isa_cap_guard(eval::integer_gemm::isa cap) : previous(eval::integer_gemm::limit_isa(cap)) {}
  ~isa_cap_guard() { eval::integer_gemm::limit_isa(previous); }
};

std::string integer_products_on(eval::integer_gemm::isa target) {
  return "exact int32 products (" + std::string(eval::integer_gemm::to_string(target));
}

}  // namespace

TEST_CASE("bit-exact convolutions on the exact int32 products equal a direct integer convolution, on every target") {
  const conv_case cases[] = {
      // 8-bit codes; two groups of 17 output channels (a partial panel), stride 2, padding 1
      {2, 4, 9, 8, 34, 3, 2, 1, 1, 2, {8, 4}, {8, 6}, {8, 3}, {8, 3}},
      // 16 output channels, a 5x5 kernel dilated by 2, padding 2
      {1, 4, 11, 10, 16, 5, 1, 2, 2, 1, {8, 3}, {8, 6}, {8, 4}, {8, 2}},
      // 12-bit inputs: 16-bit pairs; 27 taps
      {2, 3, 6, 7, 20, 3, 1, 1, 1, 1, {12, 6}, {8, 6}, {8, 3}, {10, 3}},
      // conv1d, 3 groups of 16
      {2, 6, 1, 23, 48, 4, 3, 2, 1, 3, {8, 4}, {8, 6}, {8, 5}, {8, 3}, true},
      // 16 input channels: kernel rows of 48 codes, copied in several moves
      {1, 16, 7, 9, 24, 3, 1, 1, 1, 1, {8, 4}, {8, 6}, {8, 3}, {8, 3}},
      // rows of 70 pixels, wider than the few-channel interleave takes
      {1, 2, 3, 70, 16, 3, 1, 1, 1, 1, {8, 4}, {8, 6}, {8, 3}, {8, 3}},
  };
  for (eval::integer_gemm::isa target : eval::integer_gemm::supported_isas())
    for (const conv_case& cc : cases) {
      DYNAMIC_SECTION(eval::integer_gemm::to_string(target) << ", " << cc.o << " channels, kernel " << cc.kernel
                                                            << (cc.one_dimensional ? ", 1-d" : "")) {
        const isa_cap_guard cap(target);
        builder bld(9);
        const shape x_shape = cc.one_dimensional ? shape{cc.n, cc.c, cc.w} : shape{cc.n, cc.c, cc.h, cc.w};
        auto x = bld.input("x", x_shape);
        const dims k{cc.kernel}, st{cc.stride}, pd{cc.pad}, dl{cc.dilation};
        auto conv = cc.one_dimensional
                        ? bld.add("conv", op::conv1d{.in_channels = cc.c, .out_channels = cc.o, .kernel_size = k,
                                                     .stride = st, .padding = pd, .dilation = dl, .groups = cc.groups},
                                  x)
                        : bld.add("conv", op::conv2d{.in_channels = cc.c, .out_channels = cc.o, .kernel_size = k,
                                                     .stride = st, .padding = pd, .dilation = dl, .groups = cc.groups},
                                  x);
        graph g = bld.output(conv) | init_metadata | add_common_metadata;
        shape w_shape{cc.o, cc.c / cc.groups};
        if (!cc.one_dimensional) w_shape.push_back(cc.kernel);
        w_shape.push_back(cc.kernel);
        g.parameter("conv.weight") = random_tensor(w_shape, 21, 2.0f);
        g.parameter("conv.bias") = random_tensor({cc.o}, 22, 2.0f);
        node& nd = g[g.id("conv")];
        set_format(nd, "data_in_0", {.width = cc.x.width, .frac = cc.x.frac});
        set_format(nd, "weight", {.width = cc.wt.width, .frac = cc.wt.frac});
        set_format(nd, "bias", {.width = cc.b.width, .frac = cc.b.frac});
        set_format(nd, "data_out_0", {.width = cc.y.width, .frac = cc.y.frac});
        evaluator ev(g, eval_mode::bit_exact);
        REQUIRE(ev.runs_bit_exact(g.id("conv")));
        CHECK_THAT(std::string(ev.bit_exact_description(g.id("conv"))),
                   Catch::Matchers::Contains(integer_products_on(target)));
        const tensor input = random_tensor(x_shape, 23, 6.0f);
        const tensor& y = ev.run(input)[0];
        const auto expected = reference_conv(cc, quantized_codes(input, cc.x),
                                             quantized_codes(g.parameter("conv.weight"), cc.wt),
                                             quantized_codes(g.parameter("conv.bias"), cc.b));
        CHECK(codes_of(y, cc.y.frac) == expected);
        // A second run on the kept buffers gives the same codes.
        CHECK(codes_of(ev.run(input)[0], cc.y.frac) == expected);
      }
    }
}

TEST_CASE("bit-exact linear and batched matmul on the exact int32 products, on every target") {
  for (eval::integer_gemm::isa target : eval::integer_gemm::supported_isas()) {
    DYNAMIC_SECTION(eval::integer_gemm::to_string(target)) {
      const isa_cap_guard cap(target);
      // linear on the integer products against reference_linear.
      const linear_case cases[] = {
          // 12-bit inputs by 8-bit weights over 300 terms (12+8+9+1 = 30 bits), 33 outputs.
          {300, 33, 7, {12, 5}, {8, 7}, {8, 4}, {9, 3}, true, "int32", 30},
          // narrower than one panel (10 of 16 columns), its 8-bit sums over 64 terms exact in
          // float too: a linear layer takes the integer products all the same. The input has
          // negative fraction bits (codes of 4s), which the codes' scale must handle.
          {64, 10, 5, {8, -2}, {8, 6}, {8, 5}, {8, 1}, true, "int32", 23},
      };
      for (const linear_case& c : cases) {
        INFO(c.in << " -> " << c.out);
        const graph g = linear_graph(c, 1.0f);
        evaluator ev(g, eval_mode::bit_exact);
        CHECK_THAT(std::string(ev.bit_exact_description(g.id("fc"))),
                   Catch::Matchers::Contains(integer_products_on(target)));
        const tensor input = random_tensor({c.rows, c.in}, 43, c.x.frac < 0 ? 300.0f : 30.0f);
        CHECK(codes_of(ev.run(input)[0], c.y.frac) == expected_linear(g, c, input));
      }
      // matmul: [2, 3, 5, 40] @ [3, 40, 18], the right operand broadcast over the first dimension.
      {
        const fixed_spec as{8, 4}, bs{8, 5}, ys{8, 2};
        builder bld(5);
        auto a = bld.input("a", {2, 3, 5, 40});
        auto b = bld.input("b", {3, 40, 18});
        auto m = bld.add("mm", op::matmul{}, a, b);
        graph g = bld.output(m) | init_metadata | add_common_metadata;
        node& n = g[g.id("mm")];
        set_format(n, "data_in_0", {.width = as.width, .frac = as.frac});
        set_format(n, "data_in_1", {.width = bs.width, .frac = bs.frac});
        set_format(n, "data_out_0", {.width = ys.width, .frac = ys.frac});
        evaluator ev(g, eval_mode::bit_exact);
        CHECK_THAT(std::string(ev.bit_exact_description(g.id("mm"))),
                   Catch::Matchers::Contains(integer_products_on(target)));
        const tensor ta = random_tensor({2, 3, 5, 40}, 51, 8.0f), tb = random_tensor({3, 40, 18}, 52, 4.0f);
        const auto ac = quantized_codes(ta, as), bc = quantized_codes(tb, bs);
        std::vector<std::int64_t> expected;
        for (int batch = 0; batch < 2; ++batch)
          for (int head = 0; head < 3; ++head)
            for (int i = 0; i < 5; ++i)
              for (int j = 0; j < 18; ++j) {
                std::int64_t acc = 0;
                for (int t = 0; t < 40; ++t)
                  acc += ac[static_cast<std::size_t>(((batch * 3 + head) * 5 + i) * 40 + t)] *
                         bc[static_cast<std::size_t>((head * 40 + t) * 18 + j)];
                expected.push_back(hardware_cast(acc, as.frac + bs.frac, ys.frac, ys.width));
              }
        CHECK(codes_of(ev.run({{"a", ta}, {"b", tb}})[0], ys.frac) == expected);
      }
    }
  }
}

namespace {
// A batch norm of 3 channels on input_shape ([N, 3, ...]): its result against the fold computed
// here from the statistics, channel by channel.
template <class BatchNorm>
void check_folded_batch_norm(const shape& input_shape) {
  builder bld(9);
  auto x = bld.input("x", input_shape);
  auto bn = bld.add("bn", BatchNorm{.num_features = 3}, x);
  graph g = bld.output(bn) | init_metadata | add_common_metadata;
  g.parameter("bn.weight") = tensor({3}, {1.5f, -0.75f, 2.25f});
  g.parameter("bn.bias") = tensor({3}, {0.5f, -1.25f, 3.0f});
  g.parameter("bn.running_mean") = tensor({3}, {0.25f, -0.5f, 1.0f});
  g.parameter("bn.running_var") = tensor({3}, {0.5f, 2.0f, 0.1f});
  const fixed_spec in{8, 4}, scale{8, 5}, shift{8, 4}, out{8, 3};
  node& n = g[g.id("bn")];
  set_format(n, "data_in_0", {.width = in.width, .frac = in.frac});
  set_format(n, "weight", {.width = scale.width, .frac = scale.frac});
  set_format(n, "bias", {.width = shift.width, .frac = shift.frac});
  set_format(n, "data_out_0", {.width = out.width, .frac = out.frac});

  evaluator ev(g, eval_mode::bit_exact);
  REQUIRE(ev.runs_bit_exact(g.id("bn")));
  const tensor input = random_tensor(input_shape, 21, 6.0f);
  const tensor& y = ev.run(input)[0];

  // scale_c = gamma / sqrt(var + eps) and shift_c = beta - mean * scale_c, each rounded to its
  // format like a parameter; y = floor-and-saturate(x * scale + shift) at the product's fraction.
  const std::vector<std::int64_t> xc = quantized_codes(input, in);
  std::vector<std::int64_t> scale_codes, aligned_shift_codes;
  for (std::size_t c = 0; c < 3; ++c) {
    const double s = static_cast<double>(g.parameter("bn.weight").data()[c]) /
                     std::sqrt(static_cast<double>(g.parameter("bn.running_var").data()[c]) + 1e-5);
    const double t = static_cast<double>(g.parameter("bn.bias").data()[c]) -
                     static_cast<double>(g.parameter("bn.running_mean").data()[c]) * s;
    scale_codes.push_back(quantize_code(static_cast<float>(s), scale.width, scale.frac));
    aligned_shift_codes.push_back(quantize_code(static_cast<float>(t), shift.width, shift.frac) *
                                  (std::int64_t{1} << (in.frac + scale.frac - shift.frac)));
  }
  std::size_t plane = 1;  // a channel's elements in one sample
  for (int d = 2; d < input_shape.size(); ++d) plane *= static_cast<std::size_t>(input_shape[d]);
  std::vector<std::int64_t> expected;
  for (std::size_t i = 0; i < xc.size(); ++i) {
    const std::size_t c = (i / plane) % 3;
    const std::int64_t acc = xc[i] * scale_codes[c] + aligned_shift_codes[c];
    expected.push_back(hardware_cast(acc, in.frac + scale.frac, out.frac, out.width));
  }
  CHECK(codes_of(y, out.frac) == expected);
  // The lowering (the emitter's scale and shift ROMs) holds the same codes.
  const eval::fixed_lowering* lowered = ev.lowering(g.id("bn"));
  REQUIRE(lowered != nullptr);
  CHECK(lowered->kind == eval::lowering_kind::scale_shift);
  CHECK(lowered->weight_codes == scale_codes);
  CHECK(lowered->aligned_bias == aligned_shift_codes);
  const std::int64_t hi = (std::int64_t{1} << (out.width - 1)) - 1;
  CHECK(std::count_if(expected.begin(), expected.end(), [&](std::int64_t v) { return v == hi || v == -hi - 1; }) > 0);
}
}  // namespace

TEST_CASE("bit-exact batch_norm2d: a per-channel scale and shift folded from the statistics, one cast") {
  check_folded_batch_norm<op::batch_norm2d>({2, 3, 4, 5});
}

TEST_CASE("bit-exact batch_norm1d: the same fold over [N, C] features and over [N, C, L]") {
  check_folded_batch_norm<op::batch_norm1d>({4, 3});
  check_folded_batch_norm<op::batch_norm1d>({2, 3, 7});
}
