// Exhaustive tests of the log, binary, ternary and residual-sign quantizers, encoders and
// decoders. Log formats: every valid log<W,B> (W = 2..8; from W = 9 on no bias keeps the
// 2^(W-1) - 1 exponent codes inside float32's normal range, so check() rejects them all).
// For each format:
//   (a) every code decodes to the value the format defines and encodes back to itself
//       (-0 and +0 are distinct codes; ternary's code 2 is not canonical);
//   (b) quantize is idempotent on every decoded value;
//   (c) sorted inputs give sorted outputs;
//   (d) probe inputs (values, arithmetic and geometric midpoints ± 1 float ulp, values beyond the
//       range, float32 subnormals and extremes, random floats) give the reference's value: for log
//       the nearest power of two in log2 distance (mase_test::log_reference).
#include <mase/quant/binary.hpp>
#include <mase/quant/log.hpp>

#include "../format/format_reference.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

using mase::log_fmt;
using mase_test::ld;

namespace {

bool valid(const log_fmt& f) {
  try {
    mase::check(f);
    return true;
  } catch (const mase::error&) {
    return false;
  }
}

std::string describe(const log_fmt& f) {
  return "log<" + std::to_string(f.width) + "," + std::to_string(f.bias) + ">";
}

// Floats on both sides of every decision boundary of a log format, plus the usual probes.
std::vector<float> log_probes(const log_fmt& f, std::uint64_t seed) {
  std::vector<ld> values = {0};
  for (ld m : mase_test::log_magnitudes(f)) {
    values.push_back(m);
    values.push_back(-m);
  }
  mase_test::grid g = mase_test::make_grid(values);
  g.above = mase_test::pow2(f.emax() + 1);
  g.below = -g.above;
  std::vector<float> in = mase_test::probe_inputs(g, 4096, 300, seed);
  for (int k = f.emin() - 3; k <= f.emax() + 1 && k <= 127; ++k) {
    // 2^(k + 1/2) is irrational: the floats just below and above it
    const auto b = static_cast<float>(std::sqrt(2.0L) * mase_test::pow2(k));
    for (float x : {b, mase_test::next_up(b), mase_test::next_down(b), mase_test::next_up(mase_test::next_up(b))}) {
      if (!std::isfinite(x) || x == 0) continue;
      in.push_back(x);
      in.push_back(-x);
    }
  }
  // float32 subnormals, which log2 must see at their true size
  for (std::uint32_t bits : {1u, 2u, 3u, 0x1000u, 0x1a827au, 0x200000u, 0x2d413du, 0x2d413eu, 0x3504f3u,
                             0x400000u, 0x5a827au, 0x5a827bu, 0x600000u, 0x7fffffu}) {
    float x = 0;
    std::memcpy(&x, &bits, sizeof x);
    in.push_back(x);
    in.push_back(-x);
  }
  std::sort(in.begin(), in.end(), [](float a, float b) { return a < b || (a == b && std::signbit(a) && !std::signbit(b)); });
  return in;
}

void check_log_format(const log_fmt& f, mase_test::mismatch_log& log) {
  const std::string name = describe(f);
  const std::vector<ld> magnitudes = mase_test::log_magnitudes(f);
  const std::uint64_t codes = std::uint64_t{1} << f.width;
  const std::uint64_t sign_bit = codes >> 1;
  std::vector<float> decoded(codes);
  for (std::uint64_t c = 0; c < codes; ++c) {
    const std::uint64_t e = c & (sign_bit - 1);
    ld expected = e == 0 ? 0.0L : mase_test::pow2(static_cast<int>(e) - f.bias);
    if (c & sign_bit) expected = -expected;
    const float v = mase::decode(f, c);
    decoded[c] = v;
    log.check_lazy(mase_test::same_value(v, expected, true), [&] {
      return name + ": decode(" + std::to_string(c) + ") = " + mase_test::show(v) + ", expected " + mase_test::show(expected);
    });
    const std::uint64_t back = mase::encode(f, v);
    log.check_lazy(back == c, [&] {
      return name + ": encode(decode(" + std::to_string(c) + ")) = " + std::to_string(back);
    });
  }
  std::vector<float> requantized(codes);
  mase::quantize(f, decoded, requantized);
  for (std::uint64_t c = 0; c < codes; ++c)
    log.check_lazy(mase_test::same_value(requantized[c], decoded[c], true), [&] {
      return name + ": quantize(" + mase_test::show(decoded[c]) + ") = " + mase_test::show(requantized[c]) +
             ", expected it unchanged";
    });

  const std::vector<float> in = log_probes(f, 0x10900u + static_cast<std::uint64_t>(f.width * 1000 + f.bias));
  std::vector<float> out(in.size());
  mase::quantize(f, in, out);
  for (std::size_t i = 0; i < in.size(); ++i) {
    const ld expected = mase_test::log_reference(f, magnitudes, in[i]);
    log.check_lazy(mase_test::same_value(out[i], expected, true), [&] {
      return name + ": quantize(" + mase_test::show(in[i]) + ") = " + mase_test::show(out[i]) + ", expected " +
             mase_test::show(expected);
    });
    const float via_code = mase::decode(f, mase::encode(f, in[i]));
    log.check_lazy(mase_test::same_value(via_code, expected, true), [&] {
      return name + ": decode(encode(" + mase_test::show(in[i]) + ")) = " + mase_test::show(via_code) + ", expected " +
             mase_test::show(expected);
    });
    if (i > 0)
      log.check_lazy(out[i - 1] <= out[i], [&] {
        return name + ": not monotone at " + mase_test::show(in[i - 1]) + ", " + mase_test::show(in[i]);
      });
  }
}

}  // namespace

TEST_CASE("log: every valid log<W,B> up to 8 bits") {
  for (int width = 2; width <= 8; ++width) {
    mase_test::mismatch_log log;
    std::size_t formats = 0;
    const int stride = MASE_EXHAUSTIVE_LEVEL >= 1 ? 1 : 17;
    for (int bias = -200; bias <= 200; bias += (bias == mase::default_log_bias(width) || bias == 127) ? 1 : stride) {
      const log_fmt f{.width = width, .bias = bias};
      if (!valid(f)) continue;
      check_log_format(f, log);
      ++formats;
    }
    if (valid(log_fmt{.width = width, .bias = 127})) check_log_format(log_fmt{.width = width, .bias = 127}, log);
    INFO("width " << width << ": " << formats << " formats, " << log.checked << " checks; first mismatches:\n"
                  << log.first);
    CHECK(formats > 0);
    CHECK(log.failed == 0);
  }
}

TEST_CASE("log: float32 subnormal inputs are measured at their true size") {
  // log<8,127>: emin = -126, so zero wins below 2^-126.5 ~ 0.707 * 2^-126. 2^-127 is a float32
  // subnormal below that threshold: it must flush to zero; 0.75 * 2^-126 lies above it.
  const log_fmt f{.width = 8, .bias = 127};
  const std::vector<float> in = {0x1p-127f, -0x1p-127f, 0x1.8p-127f, 0x1.fffffcp-127f, 0x1p-149f};
  std::vector<float> out(in.size());
  mase::quantize(f, in, out);
  const std::vector<ld> magnitudes = mase_test::log_magnitudes(f);
  for (std::size_t i = 0; i < in.size(); ++i) {
    INFO("x = " << mase_test::show(in[i]));
    CHECK(mase_test::same_value(out[i], mase_test::log_reference(f, magnitudes, in[i]), true));
  }
  INFO("outputs " << mase_test::show(out[0]) << ", " << mase_test::show(out[2]) << ", " << mase_test::show(out[3]));
  CHECK(out[0] == 0.0f);
  CHECK(out[2] == 0x1p-126f);
  CHECK(out[3] == 0x1p-126f);  // 2^-126 * (1 - 2^-22) is within half a binade of 2^-126
}

TEST_CASE("binary: codes, idempotence, monotonicity and the sign rule") {
  const mase::binary_fmt f;
  CHECK(mase::decode(f, 0) == -1.0f);
  CHECK(mase::decode(f, 1) == 1.0f);
  CHECK(mase::encode(f, -1.0f) == 0);
  CHECK(mase::encode(f, 1.0f) == 1);
  mase_test::grid g = mase_test::make_grid({-1, 1});
  g.above = 2;
  g.below = -2;
  const std::vector<float> in = mase_test::probe_inputs(g, 16, 4000, 3);
  std::vector<float> out(in.size());
  mase::quantize(f, in, out);
  mase_test::mismatch_log log;
  for (std::size_t i = 0; i < in.size(); ++i) {
    // ±1; zero and -0.0 map to +1 (the header's rule, as MASE's bipolar binary quantizer)
    const ld expected = (in[i] >= 0 || in[i] == 0) ? 1 : -1;
    log.check_lazy(out[i] == expected && mase::decode(f, mase::encode(f, in[i])) == expected, [&] {
      return "binary(" + mase_test::show(in[i]) + ") = " + mase_test::show(out[i]);
    });
    if (i > 0) log.check(out[i - 1] <= out[i], "binary: not monotone");
  }
  INFO(log.first);
  CHECK(log.failed == 0);
}

TEST_CASE("ternary: codes, idempotence, monotonicity and the threshold rule") {
  mase_test::mismatch_log log;
  // thresholds that are float32 values and some that are not (compared as real numbers)
  for (double t : {0.0, 0.5, 0.25, 0.001000000047497451305389404296875 /* the float nearest 1e-3 */, 0x1p-140, 0.1,
                   1e-3, 1.0 / 3.0, 1.0, 1.5}) {
    const mase::ternary_fmt f{.threshold = t};
    const std::string name = "ternary<" + mase_test::show(t) + ">";
    // codes: two-bit two's complement 0, +1, -1; 2 is not canonical and reads as 0
    log.check(mase::decode(f, 0) == 0.0f && mase::decode(f, 1) == 1.0f && mase::decode(f, 3) == -1.0f, name + ": decode");
    log.check(mase::decode(f, 2) == 0.0f, name + ": decode(2)");
    if (t < 1) {  // with a threshold of 1 or more, ±1 themselves quantize to 0
      for (std::uint64_t c : {0u, 1u, 3u}) log.check(mase::encode(f, mase::decode(f, c)) == c, name + ": round trip");
      const std::vector<float> values = {0.0f, 1.0f, -1.0f};
      std::vector<float> again(3);
      mase::quantize(f, values, again);
      log.check(again == values, name + ": not idempotent");
    }

    const auto tf = static_cast<float>(t);
    mase_test::grid g = mase_test::make_grid({-1, 0, 1, -static_cast<ld>(tf), static_cast<ld>(tf),
                                              -static_cast<ld>(mase_test::next_up(tf)), static_cast<ld>(mase_test::next_up(tf))});
    g.above = 2;
    g.below = -2;
    std::vector<float> in = mase_test::probe_inputs(g, 64, 3000, 5);
    std::vector<float> out(in.size());
    mase::quantize(f, in, out);
    for (std::size_t i = 0; i < in.size(); ++i) {
      const ld x = in[i];
      const ld expected = x > t ? 1 : x < -t ? -1 : 0;
      log.check_lazy(out[i] == expected && mase::decode(f, mase::encode(f, in[i])) == expected, [&] {
        return name + "(" + mase_test::show(in[i]) + ") = " + mase_test::show(out[i]);
      });
      if (i > 0) log.check(out[i - 1] <= out[i], name + ": not monotone");
    }
  }
  INFO(log.first);
  CHECK(log.failed == 0);
  // 0.1f lies above 0.1: it is +1 under the threshold 0.1, as the real comparison says
  std::vector<float> x = {0.1f, -0.1f, 0.099999994f};
  mase::quantize(mase::ternary_fmt{.threshold = 0.1}, x, x);
  CHECK(x == std::vector<float>{1.0f, -1.0f, 0.0f});
}

TEST_CASE("residual_sign: codes, idempotence, monotonicity and the greedy rule") {
  // Means with |m_l| > sum of the later ones: every code has a distinct value and the greedy
  // choice recovers it. Dyadic means keep every sum exact.
  const std::vector<mase::residual_sign_fmt> formats = {
      {.levels = 1, .means = {1.0, 0, 0, 0}},
      {.levels = 1, .means = {-0.375, 0, 0, 0}},
      {.levels = 2, .means = {0.5, 0.25, 0, 0}},
      {.levels = 3, .means = {0.75, -0.25, 0.125, 0}},
      {.levels = 4, .means = {8.0, 4.0, 2.0, 1.0}},
  };
  mase_test::mismatch_log log;
  for (const auto& f : formats) {
    const std::string name = "residual_sign<" + std::to_string(f.levels) + ">";
    std::vector<ld> values;
    for (std::uint64_t c = 0; c < (std::uint64_t{1} << f.levels); ++c) {
      ld expected = 0;
      for (int l = 0; l < f.levels; ++l)
        expected += (((c >> l) & 1) ? 1 : -1) * std::fabs(static_cast<ld>(f.means[static_cast<std::size_t>(l)]));
      values.push_back(expected);
      const float v = mase::decode(f, c);
      log.check(v == expected, name + ": decode(" + std::to_string(c) + ")");
      log.check(mase::encode(f, v) == c, name + ": encode(decode(" + std::to_string(c) + "))");
      float q = 0;
      mase::quantize(f, std::span<const float>(&v, 1), std::span<float>(&q, 1));
      log.check(q == v, name + ": not idempotent at " + mase_test::show(v));
    }
    mase_test::grid g = mase_test::make_grid(values);
    g.above = g.values.back() * 2;
    g.below = g.values.front() * 2;
    const std::vector<float> in = mase_test::probe_inputs(g, 64, 2000, 11);
    std::vector<float> out(in.size());
    mase::quantize(f, in, out);
    for (std::size_t i = 0; i < in.size(); ++i) {
      ld residual = in[i];
      ld expected = 0;
      for (int l = 0; l < f.levels; ++l) {  // s_l = +1 when the residual is >= 0
        const ld term = (residual >= 0 ? 1 : -1) * std::fabs(static_cast<ld>(f.means[static_cast<std::size_t>(l)]));
        expected += term;
        residual -= term;
      }
      log.check_lazy(out[i] == expected, [&] {
        return name + "(" + mase_test::show(in[i]) + ") = " + mase_test::show(out[i]) + ", expected " +
               mase_test::show(expected);
      });
      if (i > 0) log.check(out[i - 1] <= out[i], name + ": not monotone");
    }
  }
  INFO(log.first);
  CHECK(log.failed == 0);
}
