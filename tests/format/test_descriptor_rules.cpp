// Every descriptor's validity rules at their boundaries: mase::check accepts the last valid
// value and throws mase::error with the rule's message one step past it. The boundaries come
// from the rules' own words (widths of the raw word, float32's exponent range, OCP/IEEE layouts).
#include <mase/format/format.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <string>

using namespace mase;
using Catch::Contains;

namespace {

template <class D>
void rejects(const D& d, const std::string& fragment) {
  INFO(fragment);
  CHECK_THROWS_AS(check(d), error);
  CHECK_THROWS_WITH(check(d), Contains(fragment));
}

minifloat_fmt mf(int e, int m, int bias, special_values sv = special_values::finite, bool saturating = true,
                 bool subnormals = true) {
  return {.exp_bits = e, .man_bits = m, .bias = bias, .subnormals = subnormals, .specials = sv, .saturating = saturating};
}

}  // namespace

TEST_CASE("fixed_fmt rules") {
  CHECK_NOTHROW(check(fixed_fmt{.width = 1, .frac = 0}));
  CHECK_NOTHROW(check(fixed_fmt{.width = 63, .frac = 0, .is_signed = false}));
  CHECK_NOTHROW(check(fixed_fmt{.width = 8, .frac = 512}));
  CHECK_NOTHROW(check(fixed_fmt{.width = 8, .frac = -512}));
  rejects(fixed_fmt{.width = 0, .frac = 0}, "the width must be at least 1 bit");
  rejects(fixed_fmt{.width = 64, .frac = 0}, "at most 63 bits");
  rejects(fixed_fmt{.width = 8, .frac = 513}, "[-512, 512]");
  rejects(fixed_fmt{.width = 8, .frac = -513}, "[-512, 512]");
}

TEST_CASE("minifloat_fmt rules") {
  // the named formats and float32 itself are valid
  for (const minifloat_fmt& f : {formats::float16, formats::bfloat16, formats::e5m2, formats::e4m3, formats::e3m2,
                                 formats::e2m3, formats::e2m1})
    CHECK_NOTHROW(check(f));
  CHECK_NOTHROW(check(mf(8, 23, 127, special_values::ieee, false)));
  CHECK_NOTHROW(check(mf(1, 0, 0)));                                 // ±{0, 2}
  CHECK_NOTHROW(check(mf(1, 1, 0, special_values::nan_only, false))); // two exponent+mantissa bits
  rejects(mf(0, 3, 0), "at least one exponent bit");
  rejects(mf(4, -1, 7), "mantissa width cannot be negative");
  rejects(mf(9, 3, 7), "at most 8 exponent and 23 mantissa bits");
  rejects(mf(5, 24, 15), "at most 8 exponent and 23 mantissa bits");
  rejects(mf(1, 3, 0, special_values::ieee, false), "no normal binade");   // field 1 is all inf/NaN
  rejects(mf(1, 3, 0, special_values::ieee, true), "no normal binade");    // saturating does not help
  rejects(mf(1, 0, 0, special_values::nan_only, false), "no normal binade");  // field 1 is the NaN
  CHECK_NOTHROW(check(mf(2, 0, 1, special_values::nan_only, false)));         // ±{0, 1, 2}, field 3 = NaN
  rejects(mf(5, 0, 15, special_values::ieee, false), "tell NaN from inf");
  rejects(mf(4, 3, 7, special_values::finite, false), "must saturate on overflow");
  // emax <= 127: an 8-bit exponent with bias 127 is float32's range only if the top exponent is reserved
  CHECK_NOTHROW(check(mf(8, 7, 127, special_values::ieee, false)));
  rejects(mf(8, 7, 127), "emax must be <= 127");
  rejects(mf(4, 3, -121), "emax must be <= 127");
  CHECK_NOTHROW(check(mf(4, 3, -112)));  // emax = 15 + 112 = 127
  // 1 - bias >= -126
  CHECK_NOTHROW(check(mf(2, 3, 127)));
  rejects(mf(2, 3, 128), "1 - bias must be >= -126");
}

TEST_CASE("log_fmt rules") {
  CHECK_NOTHROW(check(log_fmt{.width = 2, .bias = 0}));
  CHECK_NOTHROW(check(log_fmt{.width = 8, .bias = 127}));  // emin = -126, emax = 0
  CHECK_NOTHROW(check(log_fmt{.width = 8, .bias = 0}));    // emax = 127
  CHECK_NOTHROW(check(log_fmt{.width = 8, .bias = default_log_bias(8)}));
  rejects(log_fmt{.width = 1, .bias = 0}, "at least 2 bits");
  rejects(log_fmt{.width = 9, .bias = 127}, "at most 8 bits");
  rejects(log_fmt{.width = 8, .bias = 128}, "outside float32");
  rejects(log_fmt{.width = 8, .bias = -1}, "outside float32");
}

TEST_CASE("binary, ternary and residual_sign rules") {
  CHECK_NOTHROW(check(binary_fmt{}));
  CHECK_NOTHROW(check(ternary_fmt{.threshold = 0.0}));
  CHECK_NOTHROW(check(ternary_fmt{.threshold = std::nextafter(1.0, 0.0)}));
  rejects(ternary_fmt{.threshold = 1.0}, "[0, 1)");  // +1 would quantize to 0
  rejects(ternary_fmt{.threshold = std::numeric_limits<double>::infinity()}, "[0, 1)");
  rejects(ternary_fmt{.threshold = -0.5}, "[0, 1)");
  rejects(ternary_fmt{.threshold = std::numeric_limits<double>::quiet_NaN()}, "[0, 1)");
  for (int levels = 1; levels <= 4; ++levels) CHECK_NOTHROW(check(residual_sign_fmt{.levels = levels}));
  rejects(residual_sign_fmt{.levels = 0}, "between 1 and 4");
  rejects(residual_sign_fmt{.levels = 5}, "between 1 and 4");
}

TEST_CASE("block format rules") {
  CHECK_NOTHROW(check(block_shape{.rows = block_shape::full, .cols = block_shape::full}));
  CHECK_NOTHROW(check(block_shape{.rows = 1, .cols = 1}));
  rejects(block_shape{.rows = 1, .cols = 0}, "block width");
  rejects(block_shape{.rows = 1, .cols = -2}, "block width");
  rejects(block_shape{.rows = 0, .cols = 4}, "block height");

  CHECK_NOTHROW(check(block_fp_fmt{.width = 2}));
  CHECK_NOTHROW(check(block_fp_fmt{.width = 24, .exp_bits = 7, .bias = 63}));
  rejects(block_fp_fmt{.width = 1}, "between 2 and 24");
  rejects(block_fp_fmt{.width = 25}, "between 2 and 24");
  rejects(block_fp_fmt{.exp_bits = 0}, "1 to 8 bits");
  rejects(block_fp_fmt{.exp_bits = 9}, "1 to 8 bits");
  // elements k * 2^(e - m) with m = width - 1: emin - m >= -149, emax <= 128
  CHECK_NOTHROW(check(block_fp_fmt{.width = 8, .exp_bits = 8, .bias = 142}));
  rejects(block_fp_fmt{.width = 8, .exp_bits = 8, .bias = 143}, "outside float32");
  CHECK_NOTHROW(check(block_fp_fmt{.width = 8, .exp_bits = 8, .bias = 127}));
  rejects(block_fp_fmt{.width = 8, .exp_bits = 8, .bias = 126}, "outside float32");
  rejects(block_fp_fmt{.block = {.rows = 1, .cols = 0}}, "block width");

  CHECK_NOTHROW(check(block_minifloat_fmt{.width = 2, .exp_bits = 1, .bias_bits = 1}));
  rejects(block_minifloat_fmt{.exp_bits = 0}, "element exponent");
  rejects(block_minifloat_fmt{.exp_bits = 9}, "element exponent");
  rejects(block_minifloat_fmt{.width = 4, .exp_bits = 4}, "mantissa");
  rejects(block_minifloat_fmt{.width = 30, .exp_bits = 5}, "mantissa");
  rejects(block_minifloat_fmt{.bias_bits = 0}, "bias must have 1 to 8 bits");
  rejects(block_minifloat_fmt{.bias_bits = 9}, "bias must have 1 to 8 bits");

  CHECK_NOTHROW(check(block_log_fmt{.width = 2, .bias_bits = 1}));
  rejects(block_log_fmt{.width = 1}, "between 2 and 8");
  rejects(block_log_fmt{.width = 9}, "between 2 and 8");
  rejects(block_log_fmt{.bias_bits = 9}, "1 to 8 bits");

  CHECK_NOTHROW(check(mxint_fmt{.width = 2, .exp_bits = 2}));
  CHECK_NOTHROW(check(mxint_fmt{.width = 24, .exp_bits = 8}));
  rejects(mxint_fmt{.width = 1}, "between 2 and 24");
  rejects(mxint_fmt{.width = 25}, "between 2 and 24");
  rejects(mxint_fmt{.exp_bits = 1}, "2 to 8 bits");
  rejects(mxint_fmt{.exp_bits = 9}, "2 to 8 bits");

  for (mx_element e : all_mx_elements) CHECK_NOTHROW(check(mx_fmt{.element = e, .block_size = 1}));
  rejects(mx_fmt{.block_size = 0}, "at least 1");
  // OCP MX v1.0 element facts: emax_elem and widths
  CHECK(element_emax(mx_element::fp8_e4m3) == 8);
  CHECK(element_emax(mx_element::fp8_e5m2) == 15);
  CHECK(element_emax(mx_element::fp6_e3m2) == 4);
  CHECK(element_emax(mx_element::fp6_e2m3) == 2);
  CHECK(element_emax(mx_element::fp4_e2m1) == 2);
  CHECK(element_emax(mx_element::int8) == 0);
  CHECK(element_bits(mx_element::fp6_e2m3) == 6);
  CHECK(element_bits(mx_element::fp4_e2m1) == 4);
  CHECK(element_bits(mx_element::int2) == 2);
}
