// The mean's integer rule (eval/mean_rule.hpp) against the definition of the floor, checked in
// exact integer arithmetic over every sum the inputs can produce, and the hardware's reciprocal
// multiply against the rule; average pools of any divisor window by window.
#include <mase/eval/evaluator.hpp>
#include <mase/eval/mean_rule.hpp>
#include <mase/ir/builder.hpp>
#include <mase/pass/add_common_metadata.hpp>
#include <mase/pass/init_metadata.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

using namespace mase;
using namespace mase::eval;

namespace {

fixed_fmt fmt_of(int width, int frac) { return fixed_fmt{.width = width, .frac = frac}; }

// The definition checked without division: q is ⌊S·2^a / (count·2^b)⌋ exactly when
// q·D ≤ N < (q + 1)·D, then the output format's clamp.
std::int64_t expected_mean(std::int64_t sum, std::int64_t count, int input_frac, const fixed_fmt& out) {
  const int up = std::max(0, out.frac - input_frac), down = std::max(0, input_frac - out.frac);
  const int128 n = int128{sum} << up, d = int128{count} << down;
  // Start from the truncated quotient and step to the floor.
  int128 q = n / d;
  while (q * d > n) --q;
  while ((q + 1) * d <= n) ++q;
  const integer_range range = out.saturation_range();
  return q < range.lo ? range.lo : (q > range.hi ? range.hi : static_cast<std::int64_t>(q));
}

}  // namespace

TEST_CASE("floor_divide rounds towards minus infinity", "[mean]") {
  CHECK(floor_divide(7, 2) == 3);
  CHECK(floor_divide(-7, 2) == -4);
  CHECK(floor_divide(-8, 2) == -4);
  CHECK(floor_divide(0, 9) == 0);
  CHECK(floor_divide(-1, 9) == -1);
}

TEST_CASE("the mean rule is the floor of the exact mean, and the reciprocal multiply reproduces it for every sum",
          "[mean]") {
  struct setting {
    fixed_fmt input, output;
    std::int64_t count;
  };
  // Global average pools of 3x3, 7x7 and 6x6 maps, pools of 3 and 5, a power of two; the output
  // with fewer, as many and more fraction bits than the input; a symmetric output.
  fixed_fmt symmetric = fmt_of(8, 4);
  symmetric.ovf = overflow::saturate_symmetric;
  const std::vector<setting> settings{
      {fmt_of(8, 4), fmt_of(8, 4), 9},   {fmt_of(8, 4), fmt_of(8, 6), 49},  {fmt_of(8, 3), fmt_of(6, 1), 36},
      {fmt_of(8, 5), fmt_of(10, 8), 3},  {fmt_of(6, 2), fmt_of(8, 7), 5},   {fmt_of(8, 4), fmt_of(8, 4), 16},
      {fmt_of(4, 0), fmt_of(4, 0), 7},   {fmt_of(8, 4), symmetric, 25},     {fmt_of(10, 6), fmt_of(12, 6), 196},
      {fmt_of(8, 7), fmt_of(8, 0), 1},
  };
  for (const setting& s : settings) {
    const mean_rule rule = make_mean_rule(s.input, s.output, s.count);
    INFO("count " << s.count << ", input fraction " << s.input.frac << ", output " << s.output.width << "."
                  << s.output.frac << ": M = " << rule.multiplier << ", s = " << rule.shift);
    // The header's condition, which makes the multiply exact, and its minimality.
    const auto excess = [&](int shift) {
      const uint128 power = uint128{1} << shift;
      const uint128 m = (power + static_cast<uint128>(rule.divisor) - 1) / static_cast<uint128>(rule.divisor);
      return std::pair{m * static_cast<uint128>(rule.divisor) - power, power};
    };
    const auto [e, power] = excess(rule.shift);
    CHECK(static_cast<uint128>(rule.largest_offset_numerator) * e < power);
    if (rule.shift > 0) {
      const auto [e_less, power_less] = excess(rule.shift - 1);
      CHECK_FALSE(static_cast<uint128>(rule.largest_offset_numerator) * e_less < power_less);
    }
    const integer_range codes = range_of(s.input.width, true);
    std::int64_t mismatches = 0, reciprocal_mismatches = 0;
    for (std::int64_t sum = codes.lo * s.count; sum <= codes.hi * s.count; ++sum) {
      const std::int64_t want = expected_mean(sum, s.count, s.input.frac, s.output);
      mismatches += rule.apply(sum) != want;
      reciprocal_mismatches += rule.apply_by_reciprocal(sum) != want;
    }
    CHECK(mismatches == 0);
    CHECK(reciprocal_mismatches == 0);
  }
}

TEST_CASE("the mean rule holds for wide formats at random sums and at the extremes", "[mean]") {
  const fixed_fmt input = fmt_of(16, 10), output = fmt_of(16, 12);
  for (const std::int64_t count : {std::int64_t{49}, std::int64_t{3136}, std::int64_t{12544}}) {
    const mean_rule rule = make_mean_rule(input, output, count);
    INFO("count " << count << ": product of " << rule.product_width() << " bits");
    const integer_range codes = range_of(16, true);
    std::mt19937_64 random(static_cast<std::uint64_t>(count));
    std::uniform_int_distribution<std::int64_t> sums(codes.lo * count, codes.hi * count);
    std::vector<std::int64_t> probes{codes.lo * count, codes.hi * count, 0, -1, 1, count - 1, -count};
    for (int i = 0; i < 200000; ++i) probes.push_back(sums(random));
    std::int64_t mismatches = 0;
    for (const std::int64_t sum : probes) {
      const std::int64_t want = expected_mean(sum, count, input.frac, output);
      mismatches += rule.apply(sum) != want || rule.apply_by_reciprocal(sum) != want;
    }
    CHECK(mismatches == 0);
  }
}

TEST_CASE("a mean whose numbers outgrow 64-bit integers is refused", "[mean]") {
  CHECK_THROWS_WITH(make_mean_rule(fmt_of(48, 0), fmt_of(16, 20), 1 << 20),
                    Catch::Contains("needs more than 64-bit integers; use narrower formats"));
  CHECK_THROWS_WITH(make_mean_rule(fmt_of(8, 0), fmt_of(8, 0), 0), Catch::Contains("at least 1"));
}

namespace {

// The node's formats, as the quantize pass would set them.
void set_fixed(node& n, const fixed_fmt& in, const fixed_fmt& out) {
  std::get<tensor_meta>(n.meta.common.args.at("data_in_0")).precision = format(in);
  n.meta.common.results.at("data_out_0").precision = format(out);
}

}  // namespace

TEST_CASE("bit-exact global average pooling (mean over H and W, adaptive pool to 1) follows the mean rule",
          "[mean]") {
  // 5x7 planes (35 values: no power of two), an output with more fraction bits than the input,
  // and one with fewer (a symmetric clamp).
  const fixed_fmt in = fmt_of(8, 3);
  fixed_fmt symmetric = fmt_of(6, 1);
  symmetric.ovf = overflow::saturate_symmetric;
  for (const fixed_fmt& out : {fmt_of(8, 5), symmetric}) {
    builder b(3);
    auto x = b.input("x", {2, 3, 5, 7});
    auto mean = b.add("gap", op::mean{.dim = {-1, 2}, .keepdim = true}, x);
    auto pool = b.add("pool", op::adaptive_avg_pool2d{.output_size = {1}}, x);
    graph g = b.output(mean, pool) | init_metadata | add_common_metadata;
    set_fixed(g[g.id("gap")], in, out);
    set_fixed(g[g.id("pool")], in, out);
    evaluator ev(g, eval_mode::bit_exact);
    REQUIRE(ev.runs_bit_exact(g.id("gap")));
    REQUIRE(ev.runs_bit_exact(g.id("pool")));
    // Values spanning the input's range and beyond it (the input cast saturates them).
    tensor input({2, 3, 5, 7});
    std::mt19937 random(11);
    std::uniform_real_distribution<float> values(-20.0f, 20.0f);
    for (float& v : input.values()) v = values(random);
    const auto results = ev.run(input);
    const integer_range codes = in.saturation_range();
    for (std::size_t plane = 0; plane < 6; ++plane) {
      std::int64_t sum = 0;
      for (std::size_t i = 0; i < 35; ++i) {
        // The input format's own quantization: round to nearest (ties to even), then saturate.
        const double code = std::nearbyint(static_cast<double>(input.values()[plane * 35 + i]) * 8.0);
        sum += std::clamp(static_cast<std::int64_t>(code), codes.lo, codes.hi);
      }
      const double want = static_cast<double>(expected_mean(sum, 35, in.frac, out)) / std::ldexp(1.0, out.frac);
      CHECK(results[0].values()[plane] == want);
      CHECK(results[1].values()[plane] == want);
    }
  }
}

TEST_CASE("a mean over leading dimensions has no integer rule and runs as in fake-quant", "[mean]") {
  builder b(4);
  auto x = b.input("x", {2, 3, 4});
  graph g = b.output(b.add("over_channels", op::mean{.dim = {1}}, x)) | init_metadata | add_common_metadata;
  set_fixed(g[g.id("over_channels")], fmt_of(8, 3), fmt_of(8, 3));
  const evaluator ev(g, eval_mode::bit_exact);
  CHECK_FALSE(ev.runs_bit_exact(g.id("over_channels")));
}

namespace {

// PyTorch's average pool along one axis, as its documentation states it: output o's window starts
// at o·stride − padding; its divisor counts the window's taps up to the end of the padded input
// (count_include_pad) or only those inside the input; its sum takes the taps inside the input.
struct window_extent {
  std::int64_t first = 0, last = 0, counted = 0;
};
window_extent extent_of(std::int64_t o, std::int64_t in, std::int64_t kernel, std::int64_t stride,
                        std::int64_t padding, bool count_include_pad) {
  const std::int64_t start = o * stride - padding;
  const std::int64_t end_padded = std::min(start + kernel, in + padding);
  window_extent e{std::max<std::int64_t>(start, 0), std::min(end_padded, in), 0};
  e.counted = count_include_pad ? end_padded - start : e.last - e.first;
  return e;
}

}  // namespace

TEST_CASE("bit-exact average pools of any divisor follow the mean rule window by window", "[mean]") {
  struct setting {
    const char* what;
    op::avg_pool2d pool;
    shape in;
  };
  const std::vector<setting> settings{
      {"3x3, padding 1, the padding counted (9 everywhere)",
       op::avg_pool2d{.kernel_size = {3}, .stride = {1}, .padding = {1}}, {2, 3, 5, 7}},
      {"3x3, padding 1, the padding not counted (4, 6 and 9)",
       op::avg_pool2d{.kernel_size = {3}, .stride = {1}, .padding = {1}, .count_include_pad = false}, {2, 3, 5, 7}},
      {"3x3 at stride 2 with ceil_mode (the last windows overhang)",
       op::avg_pool2d{.kernel_size = {3}, .stride = {2}, .ceil_mode = true}, {1, 2, 6, 8}},
      {"3x2 windows over a divisor_override of 5",
       op::avg_pool2d{.kernel_size = {3, 2}, .stride = {1, 2}, .divisor_override = 5}, {1, 3, 5, 6}},
  };
  const fixed_fmt in = fmt_of(8, 3);
  fixed_fmt symmetric = fmt_of(6, 1);
  symmetric.ovf = overflow::saturate_symmetric;
  for (const setting& s : settings) {
    for (const fixed_fmt& out : {fmt_of(8, 5), symmetric}) {
      INFO(s.what << ", output " << out.width << "." << out.frac);
      builder b(3);
      auto x = b.input("x", s.in);
      graph g = b.output(b.add("pool", s.pool, x)) | init_metadata | add_common_metadata;
      set_fixed(g[g.id("pool")], in, out);
      evaluator ev(g, eval_mode::bit_exact);
      REQUIRE(ev.runs_bit_exact(g.id("pool")));
      tensor input(s.in);
      std::mt19937 random(17);
      std::uniform_real_distribution<float> values(-20.0f, 20.0f);
      for (float& v : input.values()) v = values(random);
      const tensor result = ev.run(input)[0];
      const shape& o = result.shape();
      const std::int64_t kh = s.pool.kernel_size[0], kw = s.pool.kernel_size.back();
      const std::int64_t sh = s.pool.stride[0], sw = s.pool.stride.back();
      const std::int64_t ph = s.pool.padding.empty() ? 0 : s.pool.padding[0];
      const std::int64_t pw = s.pool.padding.empty() ? 0 : s.pool.padding.back();
      const integer_range codes = in.saturation_range();
      const auto code_at = [&](std::int64_t plane, std::int64_t r, std::int64_t c) {
        const float v = input.values()[static_cast<std::size_t>((plane * s.in[2] + r) * s.in[3] + c)];
        return std::clamp(static_cast<std::int64_t>(std::nearbyint(static_cast<double>(v) * 8.0)), codes.lo, codes.hi);
      };
      std::size_t at = 0;
      for (std::int64_t plane = 0; plane < s.in[0] * s.in[1]; ++plane)
        for (std::int64_t r = 0; r < o[2]; ++r)
          for (std::int64_t c = 0; c < o[3]; ++c, ++at) {
            const window_extent rows = extent_of(r, s.in[2], kh, sh, ph, s.pool.count_include_pad);
            const window_extent cols = extent_of(c, s.in[3], kw, sw, pw, s.pool.count_include_pad);
            std::int64_t sum = 0;
            for (std::int64_t i = rows.first; i < rows.last; ++i)
              for (std::int64_t j = cols.first; j < cols.last; ++j) sum += code_at(plane, i, j);
            const std::int64_t divisor =
                s.pool.divisor_override != 0 ? s.pool.divisor_override : rows.counted * cols.counted;
            const double want = static_cast<double>(expected_mean(sum, divisor, in.frac, out)) / std::ldexp(1.0, out.frac);
            CHECK(result.values()[at] == want);
          }
      // A batch other than the metadata's takes the same divisors: the first sample alone.
      if (s.in[0] > 1) {
        shape one = s.in;
        one[0] = 1;
        tensor first(one);
        std::copy_n(input.values().begin(), first.size(), first.values().begin());
        const tensor alone = ev.run(first)[0];
        CHECK(std::equal(alone.values().begin(), alone.values().end(), result.values().begin()));
      }
    }
  }
}
