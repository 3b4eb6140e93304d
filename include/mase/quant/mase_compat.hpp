#pragma once
// MASE-compatible spellings of every MASE quantizer (DeepWok/mase at ae4660b1:
// src/chop/nn/quantizers/*.py and the OCP-MX core in src/chop/nn/mx/), bit for bit.
//
// These reproduce what MASE's torch code computes in float32, quirks included: powers of two
// that are not fixed points of minifloat_denorm / block_fp, no carry into the next binade in
// minifloat_ieee, a log format that cannot hold 0, thresholds that ternary ignores, inf inputs
// that come out as NaN because MASE blends results as `(~close)*q + close*x`, -0.0 turned into
// +0.0 where MASE unblocks with F.fold, and so on. MASE's quantizers (DeepWok/mase at ae4660b1:
// src/chop/nn/quantizers/) define the semantics, and docs/formats.md lists every difference;
// the library's own formats do the arithmetically right thing instead. Use this header to check
// numerics against MASE.
//
// Rules followed throughout, because torch follows them:
// - every intermediate is a float32; Python float constants (1e-9, 0.1, 0.5) are rounded to
//   float32 before use, Python ints are exact;
// - torch.round is round-half-even, torch.sign(±0) = +0 and torch.sign(NaN) = 0,
//   torch.clamp propagates NaN and keeps -0.0, reductions (max/min) propagate NaN;
// - `2**e` for an integral float32 e is exact: a subnormal, 0 below 2^-149, inf from 2^128;
// - the operations run in MASE's order (e.g. `sign * 2**e * mantissa`, left to right), and
//   float32 sums (binary, ternary) add in the order of torch's CPU sum kernel.
//
// Arguments that MASE rejects, or that make its result undefined, throw mase::error.

#include <mase/core/error.hpp>
#include <mase/format/minifloat.hpp>
#include <mase/format/rounding.hpp>
#include <mase/quant/blocking.hpp>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mase::compat {

using shape_view = std::span<const std::int64_t>;

namespace detail {

inline constexpr float f32_infinity = std::numeric_limits<float>::infinity();
inline constexpr float f32_nan = std::numeric_limits<float>::quiet_NaN();
// Python constants as torch sees them once they meet a float32 tensor.
inline const float py_1e_9 = static_cast<float>(1e-9);
inline const float py_0_1 = static_cast<float>(0.1);
// torch.isclose(x, 0) with its default atol=1e-8, rtol=1e-5: |x| <= fl32(1e-8).
inline const float isclose_atol = static_cast<float>(1e-8);
inline const float isclose_rtol = static_cast<float>(1e-5);

// Forces a float32 value to exist as such, so that a product feeding an add is rounded
// before the add even where the compiler may contract a*b+c into one fused operation.
inline float materialize(float v) noexcept {
#if defined(__GNUC__) && defined(__x86_64__)
  __asm__("" : "+x"(v));
#elif defined(__GNUC__) && defined(__aarch64__)
  __asm__("" : "+w"(v));
#else
  volatile float stored = v;
  v = stored;
#endif
  return v;
}

// torch.sign: (0 < v) - (v < 0), so ±0 -> +0 and NaN -> 0.
inline float torch_sign(float v) noexcept { return static_cast<float>((0.0f < v) - (v < 0.0f)); }

// torch.clamp(v, min=lo, max=hi) with number bounds: NaN stays NaN, -0.0 stays -0.0.
inline float clamp_by_numbers(float v, float lo, float hi) noexcept {
  if (v < lo) v = lo;
  if (hi < v) v = hi;
  return v;
}

// torch.clamp(v, min=tensor, max=tensor): a NaN bound gives NaN.
inline float clamp_by_tensors(float v, float lo, float hi) noexcept {
  if (std::isnan(lo) || std::isnan(hi)) return f32_nan;
  return clamp_by_numbers(v, lo, hi);
}

inline float round_half_even(float v) noexcept { return round_to_integer<rounding::half_even>(v); }
inline float floor_f32(float v) noexcept { return round_to_integer<rounding::floor>(v); }
inline float ceil_f32(float v) noexcept { return round_to_integer<rounding::ceil>(v); }

// float32 log2. The reference data shows a correctly rounded log2 decides exactly what torch's
// log2 decides (its `sens_log2_cr` lists are empty); log2 in double rounded once to float32 is
// that, barring double-rounding cases far rarer than any test could meet.
inline float log2_f32(float v) noexcept { return static_cast<float>(std::log2(static_cast<double>(v))); }

// 2**e for a float32 e that is integral, ±inf or NaN (the only exponents MASE produces).
inline float pow2(float e) noexcept {
  if (std::isnan(e)) return e;
  if (e >= 128.0f) return f32_infinity;
  if (e <= -160.0f) return 0.0f;
  if (e != std::floor(e)) return std::exp2(e);
  return std::ldexp(1.0f, static_cast<int>(e));  // exact, including subnormals; 2^-150 rounds to 0
}

// torch.isclose(a, b) with default tolerances, evaluated in float32.
inline bool torch_isclose(float a, float b) noexcept {
  if (a == b) return true;
  const float actual = std::fabs(a - b);
  const float allowed = isclose_atol + std::fabs(isclose_rtol * b);
  return std::isfinite(actual) && actual <= allowed;
}

inline bool close_to_zero(float v) noexcept { return torch_isclose(v, 0.0f); }

// MASE's blend `(~close)*q + close*x`: x where it is close to 0, q elsewhere. Written as the
// float32 arithmetic it is, so 0*inf and 0*NaN make NaN and +0/-0 combine as torch does.
inline float blend_close_to_zero(bool close, float quantized, float x) noexcept {
  const float keep_quantized = close ? 0.0f : 1.0f;
  const float keep_x = close ? 1.0f : 0.0f;
  return keep_quantized * quantized + keep_x * x;
}

inline std::string shape_text(shape_view shape) { return ::mase::detail::shape_to_string(shape); }

inline std::int64_t element_count(shape_view shape) {
  std::int64_t count = 1;
  for (const std::int64_t d : shape) count *= d;
  return count;
}

inline void check_sizes(std::string_view quantizer, std::size_t x_size, std::size_t y_size) {
  require(x_size == y_size, std::string(quantizer) + ": output y has " + std::to_string(y_size) +
                                " elements but input x has " + std::to_string(x_size) +
                                "; pass an output of the same size");
}

inline void check_shape(std::string_view quantizer, shape_view shape, std::size_t x_size) {
  for (const std::int64_t d : shape)
    require(d >= 0, std::string(quantizer) + ": shape " + shape_text(shape) + " has a negative dim");
  require(element_count(shape) == static_cast<std::int64_t>(x_size),
          std::string(quantizer) + ": shape " + shape_text(shape) + " holds " + std::to_string(element_count(shape)) +
              " elements but x has " + std::to_string(x_size) + "; pass the shape of x");
}

inline void check_width(std::string_view quantizer, std::string_view argument, int value, int lo, int hi) {
  require(value >= lo && value <= hi, std::string(quantizer) + ": " + std::string(argument) + "=" +
                                          std::to_string(value) + " is out of range; use " + std::to_string(lo) + ".." +
                                          std::to_string(hi));
}

// ---- element-level cores (one float32 element, MASE's op order) ----

// _minifloat_denorm_quantize for one element.
struct minifloat_denorm_params {
  float exponent_min, exponent_max, shift, mantissa_max;
};
inline float minifloat_denorm_element(float x, const minifloat_denorm_params& p) noexcept {
  const float sign = torch_sign(x + py_1e_9);
  const float value = std::fabs(x);
  float exponent = ceil_f32(log2_f32(value + py_1e_9));
  exponent = clamp_by_numbers(exponent, p.exponent_min, p.exponent_max);
  float mantissa = value / pow2(exponent);
  float shifted = round_half_even(mantissa * p.shift);
  shifted = clamp_by_numbers(shifted, 0.0f, p.mantissa_max);
  mantissa = shifted / p.shift;
  const float quantized = sign * pow2(exponent) * mantissa;
  return blend_close_to_zero(close_to_zero(value), quantized, x);
}

// _minifloat_ieee_quantize for one element; the bias may be a per-block float32 (NaN included).
struct minifloat_ieee_params {
  float exponent_bias, exponent_min, exponent_max, shift, mantissa_max;
};
inline float minifloat_ieee_element(float x, const minifloat_ieee_params& p) noexcept {
  const float sign = torch_sign(x + py_1e_9);
  const float value = std::fabs(x);
  float exponent = floor_f32(log2_f32(value + py_1e_9));
  exponent = clamp_by_tensors(exponent, p.exponent_min, p.exponent_max);
  const float mantissa = value / pow2(exponent);
  const bool is_normal = !torch_isclose(exponent, -p.exponent_bias);
  const float normal_factor = is_normal ? 1.0f : 0.0f;
  const float subnormal_factor = is_normal ? 0.0f : 1.0f;
  // MASE evaluates both branches and blends them arithmetically.
  const float normal_shifted = clamp_by_numbers(round_half_even(mantissa * p.shift - p.shift), 0.0f, p.mantissa_max);
  const float subnormal_shifted = clamp_by_numbers(round_half_even(mantissa * p.shift / 2.0f), 0.0f, p.mantissa_max);
  const float shifted = normal_factor * normal_shifted + subnormal_factor * subnormal_shifted;
  const float blended_mantissa =
      normal_factor * (1.0f + shifted / p.shift) + subnormal_factor * (shifted / p.shift * 2.0f);
  const float quantized = sign * pow2(exponent) * blended_mantissa;
  return blend_close_to_zero(close_to_zero(value), quantized, x);
}

// _log_quantize for one element, given the float32 offset 0.1*2^emin and the exponent bounds.
inline float log_element(float x, float offset, float exponent_min, float exponent_max) noexcept {
  const float sign = torch_sign(x + offset);
  const float value = std::fabs(x) + offset;
  const float exponent = clamp_by_tensors(round_half_even(log2_f32(value)), exponent_min, exponent_max);
  return sign * pow2(exponent);
}

}  // namespace detail

// ================================================================================================
// integer.py
// ================================================================================================

// integer_quantizer: y = clamp(round_half_even(x * 2^frac_width), lo, hi) / 2^frac_width.
inline void integer_quantizer(std::span<const float> x, std::span<float> y, int width, int frac_width,
                              bool is_signed = true) {
  detail::check_sizes("integer_quantizer", x.size(), y.size());
  detail::check_width("integer_quantizer", "width", width, 1, 32);
  detail::check_width("integer_quantizer", "frac_width", frac_width, -126, 126);
  const integer_range range = range_of(width, is_signed);
  const float lo = static_cast<float>(range.lo), hi = static_cast<float>(range.hi);
  const float scale = std::ldexp(1.0f, frac_width);
  for (std::size_t i = 0; i < x.size(); ++i)
    y[i] = detail::clamp_by_numbers(detail::round_half_even(x[i] * scale), lo, hi) / scale;
}

// integer_floor_quantizer: as integer_quantizer with floor instead of round-half-even.
inline void integer_floor_quantizer(std::span<const float> x, std::span<float> y, int width, int frac_width,
                                    bool is_signed = true) {
  detail::check_sizes("integer_floor_quantizer", x.size(), y.size());
  detail::check_width("integer_floor_quantizer", "width", width, 1, 32);
  detail::check_width("integer_floor_quantizer", "frac_width", frac_width, -126, 126);
  const integer_range range = range_of(width, is_signed);
  const float lo = static_cast<float>(range.lo), hi = static_cast<float>(range.hi);
  const float scale = std::ldexp(1.0f, frac_width);
  for (std::size_t i = 0; i < x.size(); ++i)
    y[i] = detail::clamp_by_numbers(detail::floor_f32(x[i] * scale), lo, hi) / scale;
}

inline std::vector<float> integer_quantizer(std::span<const float> x, int width, int frac_width,
                                            bool is_signed = true) {
  std::vector<float> y(x.size());
  integer_quantizer(x, y, width, frac_width, is_signed);
  return y;
}

inline std::vector<float> integer_floor_quantizer(std::span<const float> x, int width, int frac_width,
                                                  bool is_signed = true) {
  std::vector<float> y(x.size());
  integer_floor_quantizer(x, y, width, frac_width, is_signed);
  return y;
}

// ================================================================================================
// quantizers_for_hw.py: int32 codes, the two's-complement (or unsigned) bit pattern mod 2^width.
// ================================================================================================

namespace detail {

template <rounding Mode>
void integer_codes_for_hw(std::string_view quantizer, std::span<const float> x, std::span<std::int32_t> y, int width,
                          int frac_width, bool is_signed) {
  check_sizes(quantizer, x.size(), y.size());
  check_width(quantizer, "width", width, 1, 31);
  check_width(quantizer, "frac_width", frac_width, -126, 126);
  const integer_range range = range_of(width, is_signed);
  const float lo = static_cast<float>(range.lo), hi = static_cast<float>(range.hi);
  const float scale = std::ldexp(1.0f, frac_width);
  const std::int64_t modulus = std::int64_t{1} << width;
  for (std::size_t i = 0; i < x.size(); ++i) {
    require(!std::isnan(x[i]), std::string(quantizer) + ": x[" + std::to_string(i) +
                                   "] is NaN, which has no integer code (MASE's float->int32 cast of NaN is "
                                   "undefined); remove NaNs before quantizing");
    const float clamped = clamp_by_numbers(round_to_integer<Mode>(x[i] * scale), lo, hi);
    const auto code = static_cast<std::int64_t>(clamped);
    y[i] = static_cast<std::int32_t>(((code % modulus) + modulus) % modulus);  // torch %: sign of the divisor
  }
}

}  // namespace detail

inline void integer_quantizer_for_hw(std::span<const float> x, std::span<std::int32_t> y, int width, int frac_width) {
  detail::integer_codes_for_hw<rounding::half_even>("integer_quantizer_for_hw", x, y, width, frac_width, true);
}

inline void integer_floor_quantizer_for_hw(std::span<const float> x, std::span<std::int32_t> y, int width,
                                           int frac_width) {
  detail::integer_codes_for_hw<rounding::floor>("integer_floor_quantizer_for_hw", x, y, width, frac_width, true);
}

// Unsigned codes use floor, not rounding (as MASE does).
inline void unsigned_integer_quantizer_for_hw(std::span<const float> x, std::span<std::int32_t> y, int width,
                                              int frac_width) {
  detail::integer_codes_for_hw<rounding::floor>("unsigned_integer_quantizer_for_hw", x, y, width, frac_width, false);
}

inline std::vector<std::int32_t> integer_quantizer_for_hw(std::span<const float> x, int width, int frac_width) {
  std::vector<std::int32_t> y(x.size());
  integer_quantizer_for_hw(x, y, width, frac_width);
  return y;
}

inline std::vector<std::int32_t> integer_floor_quantizer_for_hw(std::span<const float> x, int width, int frac_width) {
  std::vector<std::int32_t> y(x.size());
  integer_floor_quantizer_for_hw(x, y, width, frac_width);
  return y;
}

inline std::vector<std::int32_t> unsigned_integer_quantizer_for_hw(std::span<const float> x, int width,
                                                                   int frac_width) {
  std::vector<std::int32_t> y(x.size());
  unsigned_integer_quantizer_for_hw(x, y, width, frac_width);
  return y;
}

// ================================================================================================
// minifloat.py
// ================================================================================================

namespace detail {

inline void check_minifloat(std::string_view quantizer, int width, int exponent_width) {
  check_width(quantizer, "exponent_width", exponent_width, 1, 8);
  require(width - exponent_width - 1 >= 0 && width - exponent_width - 1 <= 23,
          std::string(quantizer) + ": width=" + std::to_string(width) +
              " with exponent_width=" + std::to_string(exponent_width) + " leaves " +
              std::to_string(width - exponent_width - 1) + " mantissa bits; use width - exponent_width - 1 in 0..23");
}

}  // namespace detail

// minifloat_denorm_quantizer: no implicit leading bit, so 2^k is NOT a fixed point (it maps to
// (1-2^-M)*2^k); values within 1e-8 of 0 pass through unchanged.
inline void minifloat_denorm_quantizer(std::span<const float> x, std::span<float> y, int width, int exponent_width,
                                       std::optional<int> exponent_bias = std::nullopt) {
  detail::check_sizes("minifloat_denorm_quantizer", x.size(), y.size());
  detail::check_minifloat("minifloat_denorm_quantizer", width, exponent_width);
  const int mantissa_bits = width - exponent_width - 1;
  const int bias = exponent_bias.value_or(ieee_exponent_bias(exponent_width));
  const detail::minifloat_denorm_params params{
      static_cast<float>(-bias), static_cast<float>((1 << exponent_width) - 1 - bias), std::ldexp(1.0f, mantissa_bits),
      static_cast<float>((1 << mantissa_bits) - 1)};
  for (std::size_t i = 0; i < x.size(); ++i) y[i] = detail::minifloat_denorm_element(x[i], params);
}

// minifloat_ieee_quantizer: implicit bit, subnormals at the lowest exponent, no inf/NaN codes and
// no carry into the next binade (a mantissa that rounds up to 2^M clamps to 2^M - 1).
inline void minifloat_ieee_quantizer(std::span<const float> x, std::span<float> y, int width, int exponent_width,
                                     std::optional<int> exponent_bias = std::nullopt) {
  detail::check_sizes("minifloat_ieee_quantizer", x.size(), y.size());
  detail::check_minifloat("minifloat_ieee_quantizer", width, exponent_width);
  const int mantissa_bits = width - exponent_width - 1;
  const int bias = exponent_bias.value_or(ieee_exponent_bias(exponent_width));
  const detail::minifloat_ieee_params params{
      static_cast<float>(bias), static_cast<float>(-bias), static_cast<float>((1 << exponent_width) - 1 - bias),
      std::ldexp(1.0f, mantissa_bits), static_cast<float>((1 << mantissa_bits) - 1)};
  for (std::size_t i = 0; i < x.size(); ++i) y[i] = detail::minifloat_ieee_element(x[i], params);
}

inline std::vector<float> minifloat_denorm_quantizer(std::span<const float> x, int width, int exponent_width,
                                                     std::optional<int> exponent_bias = std::nullopt) {
  std::vector<float> y(x.size());
  minifloat_denorm_quantizer(x, y, width, exponent_width, exponent_bias);
  return y;
}

inline std::vector<float> minifloat_ieee_quantizer(std::span<const float> x, int width, int exponent_width,
                                                   std::optional<int> exponent_bias = std::nullopt) {
  std::vector<float> y(x.size());
  minifloat_ieee_quantizer(x, y, width, exponent_width, exponent_bias);
  return y;
}

// ================================================================================================
// log.py
// ================================================================================================

// log_quantizer: y = sign(x + off) * 2^clamp(round(log2(|x| + off)), emin, emax), off = 0.1*2^emin.
// It never outputs 0 (x = 0 gives +2^emin) and small negatives come out positive.
inline void log_quantizer(std::span<const float> x, std::span<float> y, int width,
                          std::optional<int> exponent_bias = std::nullopt) {
  detail::check_sizes("log_quantizer", x.size(), y.size());
  detail::check_width("log_quantizer", "width", width, 2, 9);
  const int exponent_bits = width - 1;
  const int bias = exponent_bias.value_or(ieee_exponent_bias(exponent_bits));
  const int exponent_min = -bias;
  const int exponent_max = (1 << exponent_bits) - 1 - bias;
  // Python computes 2**emin * 0.1 in double; torch rounds it to float32 when adding.
  const float offset = static_cast<float>(std::ldexp(0.1, exponent_min));
  const float emin = static_cast<float>(exponent_min), emax = static_cast<float>(exponent_max);
  for (std::size_t i = 0; i < x.size(); ++i) y[i] = detail::log_element(x[i], offset, emin, emax);
}

inline std::vector<float> log_quantizer(std::span<const float> x, int width,
                                        std::optional<int> exponent_bias = std::nullopt) {
  std::vector<float> y(x.size());
  log_quantizer(x, y, width, exponent_bias);
  return y;
}

// ================================================================================================
// block_fp.py, block_minifloat.py, block_log.py (blocking: mase/quant/blocking.hpp)
// ================================================================================================

namespace detail {

inline block_layout checked_block_layout(std::string_view quantizer, std::span<const float> x, shape_view shape,
                                         std::size_t y_size, const std::vector<std::int64_t>& block_size,
                                         bool skip_first_dim) {
  check_sizes(quantizer, x.size(), y_size);
  check_shape(quantizer, shape, x.size());
  try {
    return make_mase_block_layout(shape, block_size, skip_first_dim);
  } catch (const error& e) {
    throw error(std::string(quantizer) + ": " + e.what());
  }
}

// Per-block max |x| with MASE's zero-block fix.
inline std::vector<float> fixed_block_maxima(const block_layout& layout, std::span<const float> x) {
  std::vector<float> maxima = block_max_abs(layout, x);
  fix_zero_block_maxima(maxima);
  return maxima;
}

}  // namespace detail

// block_fp_quantizer (MSFP): one exponent e = clamp(ceil(log2(max|x|)), emin, emax) per block,
// elements round to multiples of 2^(e-M) with magnitude at most (1-2^-M)*2^e, M = width-1.
inline void block_fp_quantizer(std::span<const float> x, shape_view shape, std::span<float> y, int width = 12,
                               int exponent_width = 8, std::optional<int> exponent_bias = std::nullopt,
                               const std::vector<std::int64_t>& block_size = {16}, bool skip_first_dim = true) {
  constexpr std::string_view name = "block_fp_quantizer";
  const block_layout layout = detail::checked_block_layout(name, x, shape, y.size(), block_size, skip_first_dim);
  detail::check_width(name, "width", width, 1, 24);
  detail::check_width(name, "exponent_width", exponent_width, 1, 8);
  const int mantissa_bits = width - 1;
  const int bias = exponent_bias.value_or(ieee_exponent_bias(exponent_width));
  const float exponent_max = static_cast<float>((1 << exponent_width) - 1 - bias);
  const float exponent_min = static_cast<float>(-bias);
  const float mantissa_max = static_cast<float>((1 << mantissa_bits) - 1);
  const float shift = std::ldexp(1.0f, mantissa_bits);
  const std::vector<float> maxima = detail::fixed_block_maxima(layout, x);

  for_each_block(layout, [&](std::int64_t block, std::span<const std::int64_t> elements, std::int64_t) {
    const float exponent = detail::clamp_by_numbers(
        detail::ceil_f32(detail::log2_f32(maxima[static_cast<std::size_t>(block)])), exponent_min, exponent_max);
    const float scale = detail::pow2(exponent);
    for (const std::int64_t index : elements) {
      const auto i = static_cast<std::size_t>(index);
      const float sign = detail::torch_sign(x[i] + detail::py_1e_9);
      const float value = std::fabs(x[i]) + detail::py_1e_9;
      const float shifted =
          detail::clamp_by_numbers(detail::round_half_even(value / scale * shift), 0.0f, mantissa_max);
      const float quantized = unblocked_value(layout, sign * scale * (shifted / shift));
      y[i] = detail::blend_close_to_zero(detail::close_to_zero(x[i]), quantized, x[i]);
    }
  });
}

// block_minifloat_quantizer: a shared bias = clamp(floor(log2(max|x|)), 0, 2^bias_width - 1) per
// block, then minifloat_ieee with that bias.
inline void block_minifloat_quantizer(std::span<const float> x, shape_view shape, std::span<float> y, int width,
                                      int exponent_width, int exponent_bias_width,
                                      const std::vector<std::int64_t>& block_size = {16}, bool skip_first_dim = false) {
  constexpr std::string_view name = "block_minifloat_quantizer";
  const block_layout layout = detail::checked_block_layout(name, x, shape, y.size(), block_size, skip_first_dim);
  detail::check_minifloat(name, width, exponent_width);
  detail::check_width(name, "exponent_bias_width", exponent_bias_width, 0, 30);
  const int mantissa_bits = width - exponent_width - 1;
  const float bias_max = static_cast<float>((std::int64_t{1} << exponent_bias_width) - 1);
  const float exponent_top = static_cast<float>((1 << exponent_width) - 1);
  const std::vector<float> maxima = detail::fixed_block_maxima(layout, x);

  for_each_block(layout, [&](std::int64_t block, std::span<const std::int64_t> elements, std::int64_t) {
    const float bias = detail::clamp_by_numbers(
        detail::floor_f32(detail::log2_f32(maxima[static_cast<std::size_t>(block)])), 0.0f, bias_max);
    const detail::minifloat_ieee_params params{bias, -bias, exponent_top - bias, std::ldexp(1.0f, mantissa_bits),
                                               static_cast<float>((1 << mantissa_bits) - 1)};
    for (const std::int64_t index : elements) {
      const auto i = static_cast<std::size_t>(index);
      y[i] = unblocked_value(layout, detail::minifloat_ieee_element(x[i], params));
    }
  });
}

// block_log_quantizer: a shared bias = clamp(2^(w-1) - 1 - ceil(log2(max|x|)), 0, 2^bias_width - 1)
// per block, then log_quantizer with that bias (offset 0.1*2^-bias computed in float32).
inline void block_log_quantizer(std::span<const float> x, shape_view shape, std::span<float> y, int width,
                                int exponent_bias_width, const std::vector<std::int64_t>& block_size = {16},
                                bool skip_first_dim = false) {
  constexpr std::string_view name = "block_log_quantizer";
  const block_layout layout = detail::checked_block_layout(name, x, shape, y.size(), block_size, skip_first_dim);
  detail::check_width(name, "width", width, 2, 9);
  detail::check_width(name, "exponent_bias_width", exponent_bias_width, 0, 30);
  const float exponent_top = static_cast<float>((1 << (width - 1)) - 1);
  const float bias_max = static_cast<float>((std::int64_t{1} << exponent_bias_width) - 1);
  const std::vector<float> maxima = detail::fixed_block_maxima(layout, x);

  for_each_block(layout, [&](std::int64_t block, std::span<const std::int64_t> elements, std::int64_t) {
    const float max_exponent = detail::ceil_f32(detail::log2_f32(maxima[static_cast<std::size_t>(block)]));
    const float bias = detail::clamp_by_numbers(exponent_top - max_exponent, 0.0f, bias_max);
    const float exponent_min = -bias;
    const float exponent_max = exponent_top - bias;
    // min_pos * 0.1 is a float32 tensor product here (the bias is a tensor).
    const float offset = detail::materialize(detail::pow2(exponent_min) * detail::py_0_1);
    for (const std::int64_t index : elements) {
      const auto i = static_cast<std::size_t>(index);
      y[i] = unblocked_value(layout, detail::log_element(x[i], offset, exponent_min, exponent_max));
    }
  });
}

inline std::vector<float> block_fp_quantizer(std::span<const float> x, shape_view shape, int width = 12,
                                             int exponent_width = 8, std::optional<int> exponent_bias = std::nullopt,
                                             const std::vector<std::int64_t>& block_size = {16},
                                             bool skip_first_dim = true) {
  std::vector<float> y(x.size());
  block_fp_quantizer(x, shape, y, width, exponent_width, exponent_bias, block_size, skip_first_dim);
  return y;
}

inline std::vector<float> block_minifloat_quantizer(std::span<const float> x, shape_view shape, int width,
                                                    int exponent_width, int exponent_bias_width,
                                                    const std::vector<std::int64_t>& block_size = {16},
                                                    bool skip_first_dim = false) {
  std::vector<float> y(x.size());
  block_minifloat_quantizer(x, shape, y, width, exponent_width, exponent_bias_width, block_size, skip_first_dim);
  return y;
}

inline std::vector<float> block_log_quantizer(std::span<const float> x, shape_view shape, int width,
                                              int exponent_bias_width,
                                              const std::vector<std::int64_t>& block_size = {16},
                                              bool skip_first_dim = false) {
  std::vector<float> y(x.size());
  block_log_quantizer(x, shape, y, width, exponent_bias_width, block_size, skip_first_dim);
  return y;
}

// ================================================================================================
// binary.py, ternary.py
// ================================================================================================

namespace detail {

// torch's float32 CPU sum of a contiguous row (aten/src/ATen/native/cpu/SumKernel.cpp,
// `vectorized_inner_sum`): the row is read as vectors of `lanes` floats; the vectors are summed
// lane-wise into 4 interleaved accumulators (with a 4-level cascade for long rows); the scalar
// tail is summed first, then the lanes are added to it in order. Reproducing the order makes the
// reductions of binary and ternary bit-exact instead of merely close.
inline constexpr std::int64_t torch_sum_lanes = 8;  // Vectorized<float> on AVX2

template <std::int64_t Width>
struct lane_vector {
  float lane[Width] = {};
  lane_vector& operator+=(const lane_vector& other) noexcept {
    for (std::int64_t k = 0; k < Width; ++k) lane[k] += other.lane[k];
    return *this;
  }
};

inline std::int64_t ceil_log2(std::int64_t n) noexcept {
  std::int64_t bits = 0;
  while ((std::int64_t{1} << bits) < n) ++bits;
  return bits;
}

// multi_row_sum: `rows` interleaved accumulators over `count` groups, with torch's cascade levels.
template <class Acc, std::int64_t Rows, class Load>
std::array<Acc, Rows> torch_multi_row_sum(std::int64_t count, Load&& load) {
  constexpr std::int64_t levels = 4;
  const std::int64_t level_power = std::max<std::int64_t>(4, ceil_log2(count) / levels);
  const std::int64_t level_step = std::int64_t{1} << level_power;
  const std::int64_t level_mask = level_step - 1;
  Acc acc[levels][Rows] = {};
  std::int64_t i = 0;
  while (i + level_step <= count) {
    for (std::int64_t j = 0; j < level_step; ++j, ++i)
      for (std::int64_t k = 0; k < Rows; ++k) acc[0][k] += load(i * Rows + k);
    for (std::int64_t j = 1; j < levels; ++j) {
      for (std::int64_t k = 0; k < Rows; ++k) {
        acc[j][k] += acc[j - 1][k];
        acc[j - 1][k] = Acc{};
      }
      if ((i & (level_mask << (j * level_power))) != 0) break;
    }
  }
  for (; i < count; ++i)
    for (std::int64_t k = 0; k < Rows; ++k) acc[0][k] += load(i * Rows + k);
  for (std::int64_t j = 1; j < levels; ++j)
    for (std::int64_t k = 0; k < Rows; ++k) acc[0][k] += acc[j][k];
  std::array<Acc, Rows> result;
  for (std::int64_t k = 0; k < Rows; ++k) result[static_cast<std::size_t>(k)] = acc[0][k];
  return result;
}

// row_sum: 4-way interleaving, the leftover items into accumulator 0, then accumulators 1..3.
template <class Acc, class Load>
Acc torch_row_sum(std::int64_t count, Load&& load) {
  constexpr std::int64_t ilp = 4;
  const std::int64_t groups = count / ilp;
  std::array<Acc, ilp> partial = torch_multi_row_sum<Acc, ilp>(groups, load);
  for (std::int64_t i = groups * ilp; i < count; ++i) partial[0] += load(i);
  for (std::size_t k = 1; k < ilp; ++k) partial[0] += partial[k];
  return partial[0];
}

inline float torch_sum_f32(std::span<const float> row) {
  constexpr std::int64_t lanes = torch_sum_lanes;
  const auto n = static_cast<std::int64_t>(row.size());
  if (n < lanes)  // too short to vectorise: the scalar row_sum
    return torch_row_sum<float>(n, [&](std::int64_t i) { return row[static_cast<std::size_t>(i)]; });
  using vec = lane_vector<lanes>;
  const std::int64_t vectors = n / lanes;
  const vec lane_sums = torch_row_sum<vec>(vectors, [&](std::int64_t v) {
    vec loaded;
    for (std::int64_t k = 0; k < lanes; ++k) loaded.lane[k] = row[static_cast<std::size_t>(v * lanes + k)];
    return loaded;
  });
  float total = 0.0f;
  for (std::int64_t i = vectors * lanes; i < n; ++i) total += row[static_cast<std::size_t>(i)];
  for (std::int64_t k = 0; k < lanes; ++k) total += lane_sums.lane[k];
  return total;
}

inline void check_nchw(std::string_view quantizer, shape_view shape, std::size_t x_size) {
  check_shape(quantizer, shape, x_size);
  require(shape.size() == 4, std::string(quantizer) + ": x has shape " + shape_text(shape) +
                                 "; MASE computes per-sample statistics over dims (1, 2, 3) and needs a 4-D "
                                 "[N, C, H, W] tensor (reshape x to 4-D)");
}

}  // namespace detail

// binary_quantizer:
//   bipolar=true : y = +1 where x >= 0 (-0.0 too), else -1 (NaN too); any shape;
//   bipolar=false: 4-D only, y = mean(|x[n]|) where x > 0, else 0 (0*mean: NaN if the mean is not finite).
// stochastic=true draws random numbers in MASE and is not supported.
inline void binary_quantizer(std::span<const float> x, shape_view shape, std::span<float> y, bool stochastic = false,
                             bool bipolar = false) {
  constexpr std::string_view name = "binary_quantizer";
  detail::check_sizes(name, x.size(), y.size());
  require(!stochastic,
          "binary_quantizer: stochastic=true draws random numbers in MASE, so no output is "
          "reproducible; use stochastic=false");
  if (bipolar) {
    detail::check_shape(name, shape, x.size());
    for (std::size_t i = 0; i < x.size(); ++i) y[i] = x[i] >= 0.0f ? 1.0f : -1.0f;
    return;
  }
  detail::check_nchw(name, shape, x.size());
  const std::int64_t samples = shape[0];
  const auto per_sample = static_cast<std::size_t>(shape[1] * shape[2] * shape[3]);
  std::vector<float> magnitudes(per_sample);
  for (std::int64_t n = 0; n < samples; ++n) {
    const std::size_t base = static_cast<std::size_t>(n) * per_sample;
    for (std::size_t k = 0; k < per_sample; ++k) magnitudes[k] = std::fabs(x[base + k]);
    const float alpha = detail::torch_sum_f32(magnitudes) / static_cast<float>(per_sample);  // mean = sum / numel
    for (std::size_t k = 0; k < per_sample; ++k) y[base + k] = (x[base + k] > 0.0f ? 1.0f : 0.0f) * alpha;
  }
}

inline std::vector<float> binary_quantizer(std::span<const float> x, shape_view shape, bool stochastic = false,
                                           bool bipolar = false) {
  std::vector<float> y(x.size());
  binary_quantizer(x, shape, y, stochastic, bipolar);
  return y;
}

// ternary_quantizer: 4-D only. MASE ignores `threshold` (and maximum / median / mean): it always
// uses delta_n = 0.75 * sum(|x[n]|) / numel(x[n]) and y = (x > delta) - (x < -delta), times
// alpha_n = mean of the |x| above delta when scaling_factor (0/0 = NaN for an all-zero sample).
inline void ternary_quantizer(std::span<const float> x, shape_view shape, std::span<float> y,
                              std::optional<float> threshold = std::nullopt, bool scaling_factor = false) {
  constexpr std::string_view name = "ternary_quantizer";
  (void)threshold;  // ignored by MASE: the op recomputes its own threshold
  detail::check_sizes(name, x.size(), y.size());
  detail::check_nchw(name, shape, x.size());
  const std::int64_t samples = shape[0];
  const auto per_sample = static_cast<std::size_t>(shape[1] * shape[2] * shape[3]);
  std::vector<float> magnitudes(per_sample), above(per_sample), above_magnitudes(per_sample);
  for (std::int64_t n = 0; n < samples; ++n) {
    const std::size_t base = static_cast<std::size_t>(n) * per_sample;
    for (std::size_t k = 0; k < per_sample; ++k) magnitudes[k] = std::fabs(x[base + k]);
    const float delta = 0.75f * detail::torch_sum_f32(magnitudes) / static_cast<float>(per_sample);
    float alpha = 1.0f;
    if (scaling_factor) {
      for (std::size_t k = 0; k < per_sample; ++k) {
        above[k] = magnitudes[k] > delta ? 1.0f : 0.0f;
        above_magnitudes[k] = above[k] * magnitudes[k];  // 0 * inf = NaN, as in MASE
      }
      alpha = detail::torch_sum_f32(above_magnitudes) / detail::torch_sum_f32(above);
    }
    for (std::size_t k = 0; k < per_sample; ++k) {
      const float v = x[base + k];
      const float ternary = (v > delta ? 1.0f : 0.0f) + (v < -delta ? -1.0f : 0.0f);
      y[base + k] = scaling_factor ? ternary * alpha : ternary;
    }
  }
}

inline std::vector<float> ternary_quantizer(std::span<const float> x, shape_view shape,
                                            std::optional<float> threshold = std::nullopt,
                                            bool scaling_factor = false) {
  std::vector<float> y(x.size());
  ternary_quantizer(x, shape, y, threshold, scaling_factor);
  return y;
}

// residual_sign_quantizer: levels of binarize(r) * |means[l]| on the running residual, with
// binarize(r) = c + (sign(c) - c), c = clamp(r, -1, 1) in float32. MASE ignores its
// x_quantizer argument, so there is none here. The output has x's shape for levels == 1 and
// shape [levels, *x.shape] for levels 2 and 3.
inline void residual_sign_quantizer(int levels, std::span<const float> means, std::span<const float> x,
                                    shape_view shape, std::span<float> output) {
  constexpr std::string_view name = "residual_sign_quantizer";
  require(levels >= 1 && levels <= 3, "residual_sign_quantizer: levels=" + std::to_string(levels) +
                                          " is not handled by MASE (it returns the integer 0); use 1, 2 or 3");
  require(means.size() >= static_cast<std::size_t>(levels),
          "residual_sign_quantizer: means has " + std::to_string(means.size()) +
              " entries for levels=" + std::to_string(levels) + "; pass one mean per level");
  detail::check_shape(name, shape, x.size());
  const std::size_t n = x.size();
  require(output.size() == n * static_cast<std::size_t>(levels),
          "residual_sign_quantizer: output has " + std::to_string(output.size()) +
              " elements; levels=" + std::to_string(levels) + " of x's " + std::to_string(n) + " need " +
              std::to_string(n * static_cast<std::size_t>(levels)));
  for (std::size_t i = 0; i < n; ++i) {
    float residual = x[i];
    for (int level = 0; level < levels; ++level) {
      const float clipped = detail::clamp_by_numbers(residual, -1.0f, 1.0f);
      const float binarized = clipped + (detail::torch_sign(clipped) - clipped);
      const float out = detail::materialize(binarized * std::fabs(means[static_cast<std::size_t>(level)]));
      // levels == 1 accumulates onto the Python int 0: out + 0 turns -0.0 into +0.0.
      output[static_cast<std::size_t>(level) * n + i] = levels == 1 ? out + 0.0f : out;
      residual = residual - out;
    }
  }
}

inline std::vector<float> residual_sign_quantizer(int levels, std::span<const float> means, std::span<const float> x,
                                                  shape_view shape) {
  std::vector<float> output(x.size() * static_cast<std::size_t>(std::max(levels, 1)));
  residual_sign_quantizer(levels, means, x, shape, output);
  return output;
}

// ================================================================================================
// mxint_hardware.py
// ================================================================================================

// mxint_hardware: x viewed as [-1, t1, t0] (1-D as [1, n]; parallelism [p] as [1, p]), cut into
// p1 x p0 tiles that must divide t1 x t0. Per tile e = clamp(ceil(log2(max|x|)) - 2^(E-1),
// -2^(E-1), 2^(E-1)-1) and y = 2^e * clamp(floor(x / 2^e), -2^(w-1), 2^(w-1)-1).
inline void mxint_hardware(std::span<const float> x, shape_view shape, std::span<float> y, int width,
                           int exponent_width, const std::vector<std::int64_t>& parallelism) {
  constexpr std::string_view name = "mxint_hardware";
  detail::check_sizes(name, x.size(), y.size());
  detail::check_shape(name, shape, x.size());
  detail::check_width(name, "width", width, 1, 25);
  detail::check_width(name, "exponent_width", exponent_width, 1, 8);
  require(!shape.empty(), "mxint_hardware: x must have at least one dim");
  require(parallelism.size() == 1 || parallelism.size() == 2,
          "mxint_hardware: parallelism " + detail::shape_text(parallelism) + " must be [p0] or [p1, p0]");
  const std::int64_t p1 = parallelism.size() == 1 ? 1 : parallelism[0];
  const std::int64_t p0 = parallelism.back();
  const std::int64_t t0 = shape.back();
  const std::int64_t t1 = shape.size() >= 2 ? shape[shape.size() - 2] : 1;
  require(p1 >= 1 && p0 >= 1, "mxint_hardware: parallelism " + detail::shape_text(parallelism) + " must be positive");
  require(t1 % p1 == 0 && t0 % p0 == 0,
          "mxint_hardware: parallelism " + detail::shape_text(parallelism) + " does not tile the last two dims [" +
              std::to_string(t1) + ", " + std::to_string(t0) + "] of shape " + detail::shape_text(shape) +
              " (MASE asserts t1 % p1 == 0 and t0 % p0 == 0); choose a parallelism that divides them");
  const std::int64_t batch = t1 * t0 == 0 ? 0 : static_cast<std::int64_t>(x.size()) / (t1 * t0);
  const std::vector<std::int64_t> view_shape{batch, t1, t0};
  const std::vector<std::int64_t> tile{1, p1, p0};
  const block_layout layout = make_tile_layout(view_shape, tile);

  const float bias = std::ldexp(1.0f, exponent_width - 1);
  const float exponent_min = -bias, exponent_max = std::ldexp(1.0f, exponent_width) - 1.0f - bias;
  const float int_min = -std::ldexp(1.0f, width - 1), int_max = std::ldexp(1.0f, width - 1) - 1.0f;
  const std::vector<float> maxima = block_max_abs(layout, x);
  for_each_block(layout, [&](std::int64_t block, std::span<const std::int64_t> elements, std::int64_t) {
    const float exponent = detail::clamp_by_numbers(
        detail::ceil_f32(detail::log2_f32(maxima[static_cast<std::size_t>(block)])) - bias, exponent_min, exponent_max);
    const float scale = detail::pow2(exponent);
    for (const std::int64_t index : elements) {
      const auto i = static_cast<std::size_t>(index);
      const float mantissa = detail::clamp_by_numbers(detail::floor_f32(x[i] / scale), int_min, int_max);
      y[i] = scale * mantissa;
    }
  });
}

inline std::vector<float> mxint_hardware(std::span<const float> x, shape_view shape, int width, int exponent_width,
                                         const std::vector<std::int64_t>& parallelism) {
  std::vector<float> y(x.size());
  mxint_hardware(x, shape, y, width, exponent_width, parallelism);
  return y;
}

// ================================================================================================
// mx/ (OCP microscaling): _quantize_mx and _quantize_elemwise
// ================================================================================================

// An MX element format as MASE's formats.py describes it.
struct mx_element_format {
  std::string name;
  int ebits;        // exponent bits, 0 for integers
  int mbits;        // mantissa bits including sign and implicit bit
  int emax;         // largest normal exponent
  double max_norm;  // largest normal magnitude
};

inline mx_element_format mx_element_format_from_string(std::string_view elem_format) {
  std::string key(elem_format);
  std::transform(key.begin(), key.end(), key.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  struct entry {
    std::string_view name;
    int ebits, mbits, emax;
  };
  static constexpr entry table[] = {
      {"int8", 0, 8, 0},     {"int4", 0, 4, 0},      {"int2", 0, 2, 0},     {"fp8_e5m2", 5, 4, 15},
      {"fp8_e4m3", 4, 5, 8}, {"fp6_e3m2", 3, 4, 4},  {"fp6_e2m3", 2, 5, 2}, {"fp4_e2m1", 2, 3, 2},
      {"fp4", 2, 3, 2},      {"float16", 5, 12, 15}, {"fp16", 5, 12, 15},   {"bfloat16", 8, 9, 127},
      {"bf16", 8, 9, 127},
  };
  for (const entry& e : table) {
    if (e.name != key) continue;
    // formats.py: 2^emax * (2^(mbits-1) - 1) / 2^(mbits-2), except fp8_e4m3's custom 1.75 * 2^8.
    const double max_norm = key == "fp8_e4m3"
                                ? std::ldexp(1.75, e.emax)
                                : std::ldexp(static_cast<double>((1 << (e.mbits - 1)) - 1), e.emax - (e.mbits - 2));
    return {std::string(e.name), e.ebits, e.mbits, e.emax, max_norm};
  }
  throw error("mx: unknown elem_format \"" + std::string(elem_format) +
              "\"; use one of int8, int4, int2, fp8_e5m2, fp8_e4m3, fp6_e3m2, fp6_e2m3, fp4_e2m1 (fp4), "
              "float16 (fp16), bfloat16 (bf16)");
}

enum class mx_round : std::uint8_t { nearest, floor, even };

inline mx_round mx_round_from_string(std::string_view quantizer, std::string_view round) {
  if (round == "nearest") return mx_round::nearest;
  if (round == "floor") return mx_round::floor;
  if (round == "even") return mx_round::even;
  throw error(std::string(quantizer) + ": round=\"" + std::string(round) + "\" is not supported; use \"nearest\" " +
              "(ties away from zero), \"even\" or \"floor\" (\"dither\" is random in MASE)");
}

namespace detail {

// _round_mantissa (clamp=False).
inline float mx_round_mantissa(float a, mx_round round) noexcept {
  switch (round) {
    case mx_round::floor: return torch_sign(a) * floor_f32(std::fabs(a));
    case mx_round::nearest: return torch_sign(a) * floor_f32(std::fabs(a) + 0.5f);  // float32 add: ties away
    case mx_round::even: {
      const float magnitude = std::fabs(a);
      // (|a| - 0.5) % 2 == 0 marks the ties whose away-rounding lands on an odd integer.
      const float tie_to_odd = std::fmod(magnitude - 0.5f, 2.0f) == 0.0f ? 1.0f : 0.0f;
      return torch_sign(a) * (floor_f32(magnitude + 0.5f) - tie_to_odd);
    }
  }
  return a;
}

struct mx_element_params {
  int ebits;
  float mantissa_scale;  // 2^(mbits-2)
  float min_exponent;    // 2 - 2^(ebits-1)
  float min_normal;      // 2^min_exponent, for allow_denorm=false
  float max_norm;
};

inline mx_element_params mx_params(const mx_element_format& format) {
  const int min_exponent = format.ebits > 0 ? 2 - (1 << (format.ebits - 1)) : 0;
  return {format.ebits, std::ldexp(1.0f, format.mbits - 2), static_cast<float>(min_exponent),
          format.ebits > 0 ? std::ldexp(1.0f, min_exponent) : 0.0f, static_cast<float>(format.max_norm)};
}

// _quantize_elemwise_core for one element.
inline float mx_elemwise_element(float a, const mx_element_params& p, mx_round round, bool saturate_normals,
                                 bool allow_denorm) noexcept {
  float out = a;
  if (!allow_denorm && p.ebits > 0) out = (std::fabs(a) >= p.min_normal ? 1.0f : 0.0f) * a;
  if (p.ebits != 0) {
    float private_exponent = floor_f32(log2_f32(std::fabs(a) + (a == 0.0f ? 1.0f : 0.0f)));
    private_exponent = clamp_by_numbers(private_exponent, p.min_exponent, f32_infinity);
    const float scale = pow2(private_exponent);
    out = out / scale * p.mantissa_scale;
    out = mx_round_mantissa(out, round);
    out = out / p.mantissa_scale * scale;
  } else {
    out = out * p.mantissa_scale;
    out = mx_round_mantissa(out, round);
    out = out / p.mantissa_scale;
  }
  if (saturate_normals || p.ebits == 0) {
    out = clamp_by_numbers(out, -p.max_norm, p.max_norm);
  } else if (std::fabs(out) > p.max_norm) {
    out = torch_sign(out) * f32_infinity;
  }
  if (a == f32_infinity) out = f32_infinity;
  if (a == -f32_infinity) out = -f32_infinity;
  return out;
}

}  // namespace detail

// mx_quantize_elemwise (_quantize_elemwise): the MX element step without a shared scale.
// saturate_normals=false turns magnitudes above max_norm into ±inf; allow_denorm=false flushes
// values below the smallest normal to 0.
inline void mx_quantize_elemwise(std::span<const float> x, std::span<float> y, std::string_view elem_format,
                                 std::string_view round = "nearest", bool saturate_normals = false,
                                 bool allow_denorm = true) {
  detail::check_sizes("mx_quantize_elemwise", x.size(), y.size());
  const mx_element_format format = mx_element_format_from_string(elem_format);
  const mx_round mode = mx_round_from_string("mx_quantize_elemwise", round);
  const detail::mx_element_params params = detail::mx_params(format);
  for (std::size_t i = 0; i < x.size(); ++i)
    y[i] = detail::mx_elemwise_element(x[i], params, mode, saturate_normals, allow_denorm);
}

inline std::vector<float> mx_quantize_elemwise(std::span<const float> x, std::string_view elem_format,
                                               std::string_view round = "nearest", bool saturate_normals = false,
                                               bool allow_denorm = true) {
  std::vector<float> y(x.size());
  mx_quantize_elemwise(x, y, elem_format, round, saturate_normals, allow_denorm);
  return y;
}

// mx_quantize (_quantize_mx, the PyTorch path): blocks are runs of `block_size` along each axis in
// `axes` (zero-padded; block_size 0 = the whole axis). Per block, the shared exponent is
// floor(log2(max|x|)) - emax (NaN above 2^(scale_bits-1)-1, raised to -(2^(scale_bits-1)-1) below);
// elements are x / 2^se quantized to elem_format (saturating), times 2^se.
// shared_exp_method "none" gives every element its own exponent.
inline void mx_quantize(std::span<const float> x, shape_view shape, std::span<float> y, std::string_view elem_format,
                        int scale_bits = 8, std::int64_t block_size = 32, std::vector<std::int64_t> axes = {-1},
                        std::string_view round = "nearest", bool flush_fp32_subnorms = false,
                        std::string_view shared_exp_method = "max") {
  constexpr std::string_view name = "mx_quantize";
  detail::check_sizes(name, x.size(), y.size());
  detail::check_shape(name, shape, x.size());
  const mx_element_format format = mx_element_format_from_string(elem_format);
  const mx_round mode = mx_round_from_string(name, round);
  detail::check_width(name, "scale_bits", scale_bits, 1, 9);
  require(block_size >= 0, "mx_quantize: block_size=" + std::to_string(block_size) +
                               " must be >= 0 (0 shares one exponent along the whole axis)");
  require(
      shared_exp_method == "max" || shared_exp_method == "none",
      "mx_quantize: shared_exp_method=\"" + std::string(shared_exp_method) + "\" is unknown; use \"max\" or \"none\"");
  const auto rank = static_cast<std::int64_t>(shape.size());
  require(!axes.empty(), "mx_quantize: axes is empty; name the dims that share an exponent, e.g. {-1}");
  std::vector<std::int64_t> tile(shape.size(), 1);
  std::vector<bool> listed(shape.size(), false);
  for (std::int64_t axis : axes) {
    require(axis >= -rank && axis < rank, "mx_quantize: axis " + std::to_string(axis) + " is out of range for shape " +
                                              detail::shape_text(shape) + "; use -rank..rank-1");
    const auto dim = static_cast<std::size_t>(axis < 0 ? axis + rank : axis);
    require(!listed[dim], "mx_quantize: axes lists dim " + std::to_string(dim) + " twice; list each axis once");
    listed[dim] = true;
    tile[dim] = block_size > 0 ? block_size : std::max<std::int64_t>(shape[dim], 1);
  }
  const block_layout layout = make_tile_layout(shape, tile);
  const detail::mx_element_params params = detail::mx_params(format);
  const float scale_emax = static_cast<float>((1 << (scale_bits - 1)) - 1);
  const float min_normal_fp32 = std::ldexp(1.0f, -126);
  const float emax = static_cast<float>(format.emax);
  const bool per_element = shared_exp_method == "none";
  const std::vector<float> maxima = per_element ? std::vector<float>{} : block_max_abs(layout, x);

  // floor(log2(max + (max == 0) * 2^-126)), the subnormal flush, the offset and the range fix.
  const auto quantize_with = [&](float magnitude, std::span<const std::int64_t> elements) {
    float shared_exp =
        detail::floor_f32(detail::log2_f32(magnitude + min_normal_fp32 * (magnitude == 0.0f ? 1.0f : 0.0f)));
    const float keep = flush_fp32_subnorms ? (shared_exp > -127.0f ? 1.0f : 0.0f) : 1.0f;
    shared_exp = shared_exp - emax;
    if (shared_exp > scale_emax) shared_exp = detail::f32_nan;
    if (shared_exp < -scale_emax) shared_exp = -scale_emax;
    const float scale = detail::pow2(shared_exp);
    for (const std::int64_t index : elements) {
      const auto i = static_cast<std::size_t>(index);
      const float scaled = x[i] * keep / scale;
      y[i] = detail::mx_elemwise_element(scaled, params, mode, true, true) * scale;
    }
  };
  for_each_block(layout, [&](std::int64_t block, std::span<const std::int64_t> elements, std::int64_t) {
    if (!per_element) {
      quantize_with(maxima[static_cast<std::size_t>(block)], elements);
      return;
    }
    for (const std::int64_t& index : elements)
      quantize_with(std::fabs(x[static_cast<std::size_t>(index)]), std::span<const std::int64_t>(&index, 1));
  });
}

inline std::vector<float> mx_quantize(std::span<const float> x, shape_view shape, std::string_view elem_format,
                                      int scale_bits = 8, std::int64_t block_size = 32,
                                      std::vector<std::int64_t> axes = {-1}, std::string_view round = "nearest",
                                      bool flush_fp32_subnorms = false, std::string_view shared_exp_method = "max") {
  std::vector<float> y(x.size());
  mx_quantize(x, shape, y, elem_format, scale_bits, block_size, std::move(axes), round, flush_fp32_subnorms,
              shared_exp_method);
  return y;
}

}  // namespace mase::compat
