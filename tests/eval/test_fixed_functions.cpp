// The integer rules of softmax and layer / RMS normalization (eval/fixed_functions.hpp) and the
// GELU table against double-precision references, with the error bounds the rules state; the
// bounds are at least as tight as I-BERT's published ones (its integer exp: max error 1.9e-3;
// its i-GELU: L∞ 0.018 on [-4, 4]). And the bit-exact evaluator running them in a graph.

#include <mase/eval/bit_exact.hpp>
#include <mase/eval/evaluator.hpp>
#include <mase/eval/fixed_functions.hpp>
#include <mase/ir/builder.hpp>
#include <mase/pass/add_common_metadata.hpp>
#include <mase/pass/init_metadata.hpp>
#include <mase/pass/quantize.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

using namespace mase;

namespace {

fixed_fmt fx(int width, int frac) { return fixed_fmt{.width = width, .frac = frac}; }

// Random codes of a format, seeded.
std::vector<std::int64_t> random_codes(std::mt19937& random, const fixed_fmt& f, std::size_t n) {
  const integer_range range = f.code_range();
  std::uniform_int_distribution<std::int64_t> code(range.lo, range.hi);
  std::vector<std::int64_t> out(n);
  for (std::int64_t& c : out) c = code(random);
  return out;
}

double value(std::int64_t code, int frac) { return std::ldexp(static_cast<double>(code), -frac); }

double largest(const fixed_fmt& f) { return value(f.saturation_range().hi, f.frac); }
double smallest(const fixed_fmt& f) { return value(f.saturation_range().lo, f.frac); }

}  // namespace

TEST_CASE("integer exp: every table entry is exp rounded to the nearest code", "[fixed_functions]") {
  for (const auto& [in, out, row] : {std::tuple{fx(8, 4), fx(8, 7), 32}, std::tuple{fx(8, 3), fx(16, 12), 128},
                                     std::tuple{fx(12, 8), fx(8, 6), 8}}) {
    const eval::softmax_rule rule = eval::make_softmax_rule(in, out, row);
    CHECK(rule.exp_frac == out.frac + eval::ceil_log2(row + 1));
    REQUIRE(rule.exp_table.front() == std::int64_t{1} << rule.exp_frac);
    double worst = 0;
    const std::int64_t distances = std::int64_t{1} << in.width;
    for (std::int64_t k = 0; k < distances; ++k) {
      const double exact = std::exp(-value(k, in.frac));
      worst = std::max(worst, std::abs(value(rule.exp_of(k), rule.exp_frac) - exact));
    }
    CHECK(worst <= std::ldexp(0.5, -rule.exp_frac));
    CHECK(worst < 1.9e-3);  // I-BERT's i-exp
  }
}

TEST_CASE("integer softmax: within 1.5 output steps of the exact softmax", "[fixed_functions]") {
  std::mt19937 random(11);
  for (const auto& [in, out, row] : {std::tuple{fx(8, 4), fx(8, 7), 32}, std::tuple{fx(8, 3), fx(8, 7), 128},
                                     std::tuple{fx(6, 2), fx(12, 10), 16}, std::tuple{fx(16, 10), fx(8, 7), 64}}) {
    const eval::softmax_rule rule = eval::make_softmax_rule(in, out, row);
    std::vector<std::int64_t> y(static_cast<std::size_t>(row));
    double worst = 0;
    for (int trial = 0; trial < 50; ++trial) {
      const std::vector<std::int64_t> x = random_codes(random, in, static_cast<std::size_t>(row));
      rule.run(x, y);
      const double m = value(*std::max_element(x.begin(), x.end()), in.frac);
      double sum = 0;
      for (std::int64_t c : x) sum += std::exp(value(c, in.frac) - m);
      for (std::size_t i = 0; i < x.size(); ++i) {
        const double exact = std::min(std::exp(value(x[i], in.frac) - m) / sum, largest(out));
        worst = std::max(worst, std::abs(value(y[i], out.frac) - exact));
      }
    }
    INFO(in.width << "-bit input, " << out.frac << " output fraction bits, rows of " << row);
    CHECK(worst < 1.5 * std::ldexp(1.0, -out.frac));
  }
}

TEST_CASE("integer inverse square root: the largest r with r^2 v <= 2^2p", "[fixed_functions]") {
  std::mt19937_64 random(3);
  std::uniform_int_distribution<std::int64_t> values(1, std::int64_t{1} << 50);
  std::vector<std::int64_t> cases{1, 2, 3, 4, 15, 16, 17, 1 << 20, (std::int64_t{1} << 40) + 1};
  for (int i = 0; i < 200; ++i) cases.push_back(values(random));
  for (std::int64_t v : cases)
    for (int p : {8, 20, 31, 45, 62}) {
      const std::int64_t r = eval::inverse_sqrt_floor(v, p);
      const eval::int128 limit = eval::int128{1} << (2 * p);
      CHECK(eval::int128{r} * r * v <= limit);
      CHECK(eval::int128{r + 1} * (r + 1) * v > limit);
      // Where double's 53 bits hold 2^p / √v to well within one unit, it agrees.
      if (p <= 31)
        CHECK(static_cast<double>(r) == std::floor(std::ldexp(1.0, p) / std::sqrt(static_cast<double>(v))));
    }
  CHECK(eval::inverse_sqrt_floor(0, 10) == 0);
}

TEST_CASE("integer layer and RMS norm: within one output step (and a quarter per unit of weight) of double",
          "[fixed_functions]") {
  std::mt19937 random(7);
  const fixed_fmt in = fx(8, 4), w_fmt = fx(8, 6), b_fmt = fx(8, 5), out = fx(8, 4);
  for (const bool centred : {true, false})
    for (const std::int64_t row : {16, 128})
      for (const bool affine : {false, true}) {
        const std::vector<std::int64_t> w = affine ? random_codes(random, w_fmt, static_cast<std::size_t>(row))
                                                   : std::vector<std::int64_t>{};
        const std::vector<std::int64_t> b = affine && centred ? random_codes(random, b_fmt, static_cast<std::size_t>(row))
                                                              : std::vector<std::int64_t>{};
        const double eps = 1e-5;
        const eval::normalization_rule rule = eval::make_normalization_rule(
            centred, row, eps, in, out, affine ? std::optional(w_fmt) : std::nullopt, w,
            !b.empty() ? std::optional(b_fmt) : std::nullopt, b);
        std::vector<std::int64_t> y(static_cast<std::size_t>(row));
        for (int trial = 0; trial < 30; ++trial) {
          const std::vector<std::int64_t> x = random_codes(random, in, static_cast<std::size_t>(row));
          rule.run(x, y);
          double mean = 0, square = 0;
          for (std::int64_t c : x) mean += value(c, in.frac), square += value(c, in.frac) * value(c, in.frac);
          mean /= static_cast<double>(row);
          square /= static_cast<double>(row);
          const double denominator = centred ? std::sqrt(square - mean * mean + eps) : std::sqrt(square + eps);
          for (std::size_t i = 0; i < x.size(); ++i) {
            const double weight = affine ? value(w[i], w_fmt.frac) : 1.0;
            const double bias = b.empty() ? 0.0 : value(b[i], b_fmt.frac);
            const double exact = ((value(x[i], in.frac) - (centred ? mean : 0.0)) / denominator) * weight + bias;
            const double expected = std::clamp(exact, smallest(out), largest(out));
            INFO((centred ? "layer" : "rms") << " norm, rows of " << row << (affine ? ", affine" : ""));
            CHECK(std::abs(value(y[i], out.frac) - expected) <=
                  std::ldexp(1.0, -out.frac) * (1.0 + std::abs(weight) / 4) + 1e-12);
          }
        }
      }
}

TEST_CASE("the GELU table: L-infinity error under I-BERT's 0.018 on [-4, 4]", "[fixed_functions]") {
  const fixed_fmt in = fx(8, 5);  // [-4, 4) in steps of 1/32
  const format out(fx(8, 5));
  const std::vector<float> table = eval::activation_lut(op::gelu{}, in, out);
  double worst = 0;
  const integer_range codes = in.code_range();
  for (std::int64_t c = codes.lo; c <= codes.hi; ++c) {
    const double x = value(c, in.frac);
    const double exact = 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
    worst = std::max(worst, std::abs(static_cast<double>(table[static_cast<std::size_t>(c - codes.lo)]) - exact));
  }
  CHECK(worst <= std::ldexp(0.5, -5));
  CHECK(worst < 0.018);
}

// A graph: linear, layer norm, softmax; bit-exact runs the integer rules (the kernels say so) and
// agrees with them applied by hand to the linear's output.
TEST_CASE("bit-exact evaluation runs the integer softmax and layer norm", "[fixed_functions]") {
  builder b(41);
  auto x = b.input("x", {4, 16});
  auto h = b.add("fc", op::linear{.in_features = 16, .out_features = 32}, x);
  h = b.add("norm", op::layer_norm{.normalized_shape = {32}}, h);
  auto y = b.add("softmax", op::softmax{.dim = -1}, h);
  const graph g = b.output(y);
  const operand_formats eight{.data_in = format(fx(8, 4)), .weight = format(fx(8, 6)),
                              .bias = format(fx(8, 5)), .data_out = format(fx(8, 4))};
  const operand_formats probabilities{.data_in = format(fx(8, 4)), .data_out = format(fx(8, 7))};
  const quantize_config config{.by = quantize_by::name,
                               .default_config = eight,
                               .entries = {{"softmax", probabilities}}};
  const auto q = g | init_metadata | add_common_metadata | quantize(config);
  evaluator model(q, eval_mode::bit_exact);
  CHECK(model.runs_bit_exact(*q.find("norm")));
  CHECK(model.runs_bit_exact(*q.find("softmax")));
  tensor input({4, 16});
  std::mt19937 random(2);
  std::uniform_real_distribution<float> uniform(-2.0f, 2.0f);
  for (float& v : input.values()) v = uniform(random);
  const tensor out = model.run(ordered_map<tensor>{{"x", input}})[0];
  // Each row: codes of 7 fraction bits, at most 1.5 steps from a softmax, so they sum to about 1.
  for (std::int64_t r = 0; r < 4; ++r) {
    double sum = 0;
    for (std::int64_t c = 0; c < 32; ++c) {
      const double v = out.data()[r * 32 + c];
      CHECK(v * 128 == std::floor(v * 128));
      sum += v;
    }
    CHECK(std::abs(sum - 1.0) <= 32 * 1.5 / 128);
  }
}

// Element-wise ops with broadcasting: a bias over the last dimension, a per-channel scale. Each
// result is the exact sum or product of the two operands' values, floored to the result format
// and saturated, computed here in double for every broadcast pair.
TEST_CASE("bit-exact add and mul broadcast as PyTorch does", "[fixed_functions]") {
  builder b(42);
  auto x = b.input("x", {2, 3, 8});
  auto bias = b.input("bias", {8});
  auto scale = b.input("scale", {3, 1});
  auto h = b.add("add", op::add{}, x, bias);
  auto y = b.add("mul", op::mul{}, h, scale);
  const graph g = b.output(y);
  const quantize_config config{
      .by = quantize_by::name,
      .entries = {{"add", operand_formats{.data_in = format(fx(8, 4)), .data_out = format(fx(8, 3))}},
                  {"mul", operand_formats{.data_in = format(fx(8, 3)), .data_out = format(fx(7, 2))}}}};
  const auto q = g | init_metadata | add_common_metadata | quantize(config);
  evaluator model(q, eval_mode::bit_exact);
  REQUIRE(model.runs_bit_exact(*q.find("add")));
  REQUIRE(model.runs_bit_exact(*q.find("mul")));
  std::mt19937 random(9);
  const auto codes_tensor = [&](shape s, const fixed_fmt& f) {
    tensor t(s);
    const std::vector<std::int64_t> c = random_codes(random, f, t.size());
    for (std::size_t i = 0; i < t.size(); ++i) t.data()[i] = static_cast<float>(value(c[i], f.frac));
    return t;
  };
  const tensor xv = codes_tensor({2, 3, 8}, fx(8, 4)), bv = codes_tensor({8}, fx(8, 4)), sv = codes_tensor({3, 1}, fx(8, 3));
  const tensor out = model.run(ordered_map<tensor>{{"x", xv}, {"bias", bv}, {"scale", sv}})[0];
  const auto cast = [](double v, const fixed_fmt& f) {
    const integer_range r = f.saturation_range();
    return value(std::clamp(static_cast<std::int64_t>(std::floor(std::ldexp(v, f.frac))), r.lo, r.hi), f.frac);
  };
  for (std::int64_t n = 0; n < 2; ++n)
    for (std::int64_t c = 0; c < 3; ++c)
      for (std::int64_t k = 0; k < 8; ++k) {
        const double sum = cast(static_cast<double>(xv.data()[(n * 3 + c) * 8 + k]) + bv.data()[k], fx(8, 3));
        const double expected = cast(sum * static_cast<double>(sv.data()[c]), fx(7, 2));
        CHECK(out.data()[(n * 3 + c) * 8 + k] == static_cast<float>(expected));
      }
}
