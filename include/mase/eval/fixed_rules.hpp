#pragma once
// The rules every fixed-point computation of the bit-exact evaluator and of the emitted hardware
// is built from (eval/bit_exact.hpp explains where each applies): the one cast, the accumulators'
// widths, the bias's alignment, and codes against values.

#include <mase/format/fixed.hpp>
#include <mase/format/rounding.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>

namespace mase::eval {

// fixed_signed_cast(ROUND_FLOOR = 1): `raw` holds a value with `from_frac` fraction bits.
constexpr std::int64_t hardware_cast_raw(std::int64_t raw, int from_frac, const fixed_fmt& to) noexcept {
  const int shift = from_frac - to.frac;
  const integer_range range = to.saturation_range();
  std::int64_t v = raw;
  if (shift > 0) {
    v = shift_right_rounded(raw, shift, rounding::floor);
  } else if (shift < 0) {
    // A left shift that leaves the word saturates (the value is out of any 63-bit range).
    const int up = -shift;
    const std::int64_t limit = up >= 63 ? 0 : (std::numeric_limits<std::int64_t>::max() >> up);
    if (raw > limit) return range.hi;
    if (raw < -limit) return range.lo;
    v = raw * (std::int64_t{1} << up);
  }
  return v < range.lo ? range.lo : (v > range.hi ? range.hi : v);
}

// The accumulator a dot product of K terms needs, plus one bit when a bias is added.
constexpr int dot_product_accumulator_width(const fixed_fmt& x, const fixed_fmt& w, std::int64_t k,
                                            bool adds_bias) noexcept {
  return accumulator_format(product_format(x, w), k).width + (adds_bias ? 1 : 0);
}

// The accumulator the linear/conv kernels (and the emitted RTL) keep: the exact sum of K products
// with one bit for the bias addition, or more when the bias aligned to the products' fraction
// bits is wider still.
constexpr int linear_accumulator_width(const fixed_fmt& x, const fixed_fmt& w, std::int64_t k,
                                       const std::optional<fixed_fmt>& bias) noexcept {
  const int sum = dot_product_accumulator_width(x, w, k, bias.has_value());
  if (!bias) return sum;
  const int aligned_bias = bias->width + std::max(0, x.frac + w.frac - bias->frac) + 1;
  return std::max(sum, aligned_bias);
}

// The bias aligned to the accumulator's fraction bits (fixed_cast: floor when dropping bits).
constexpr std::int64_t bias_to_accumulator_raw(std::int64_t bias_raw, int bias_frac, int acc_frac) noexcept {
  if (bias_frac > acc_frac) return shift_right_rounded(bias_raw, bias_frac - acc_frac, rounding::floor);
  return bias_raw * (std::int64_t{1} << (acc_frac - bias_frac));
}


// The code a value of format f holds (the value must be exact in f).
inline std::int64_t raw_of(double value, int frac) noexcept { return std::llround(std::ldexp(value, frac)); }
inline double value_of(std::int64_t raw, int frac) noexcept { return std::ldexp(static_cast<double>(raw), -frac); }

// raw_of and value_of for whole tensors: one multiplication by a power of two each way (exact for
// fraction widths within ±512), instead of a library call per value. The values must be exact
// codes, as every tensor between the bit-exact kernels is (the evaluator casts their inputs).
struct code_scale {
  double up = 1, down = 1;
  explicit code_scale(int frac) noexcept : up(std::ldexp(1.0, frac)), down(std::ldexp(1.0, -frac)) {}
  std::int64_t code(float value) const noexcept { return static_cast<std::int64_t>(static_cast<double>(value) * up); }
  float value(std::int64_t code) const noexcept { return static_cast<float>(static_cast<double>(code) * down); }
};

}  // namespace mase::eval
