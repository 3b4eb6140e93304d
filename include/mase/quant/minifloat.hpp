#pragma once
// Array quantizer, encoder and decoder for minifloats.
//
// Round to the nearest representable value (or with the format's directed rounding): pick
// the binade e = clamp(floor(log2|x|), emin, emax), scale x so that one unit is one step of that
// binade, round to an integer with the shared rule, scale back. A mantissa that rounds up to
// 2.0 carries into the next binade for free (MASE's minifloat_ieee clamps it instead).
// Then overflow: saturate, or ±inf / NaN as the format says.
//
// Non-finite inputs: NaN stays NaN (also for formats without a NaN code: the float result says
// "no value"; `encode` then gives the format's NaN code or throws for finite formats);
// ±inf gives ±inf where the format has it, the largest finite value when saturating, else NaN.
// Signed zeros and values that round to zero keep their sign.

#include <mase/format/minifloat.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <type_traits>

namespace mase {

namespace detail {

// float32 arithmetic is exact when every scale factor below is a normal float32.
constexpr bool minifloat_run_fits_float(int emin, int emax, int man_bits) noexcept;
constexpr bool minifloat_exact_in_float(const minifloat_fmt& f) noexcept {
  return minifloat_run_fits_float(f.emin(), f.emax(), f.man_bits);
}

// The loop every minifloat quantization runs (block and MX formats call it once per block
// with a shifted exponent range).
template <class T>
struct minifloat_run_params {
  int emin, emax, man_bits;
  T max_value, overflow_value;
  bool subnormals;
};

template <class T>
minifloat_run_params<T> minifloat_params(const minifloat_fmt& f) noexcept {
  const T max_value = static_cast<T>(f.max_value());
  return {f.emin(), f.emax(), f.man_bits, max_value,
          f.saturating ? max_value
          : f.has_inf() ? std::numeric_limits<T>::infinity()
                        : std::numeric_limits<T>::quiet_NaN(),
          f.subnormals};
}

// Whether float32 arithmetic is exact for this exponent range: every scale factor below is a
// normal float32 and every result a float32.
constexpr bool minifloat_run_fits_float(int emin, int emax, int man_bits) noexcept {
  return emin >= -126 && emax <= 126 && emin - man_bits >= -149;
}

template <rounding R, class T>
inline void quantize_minifloat_run(const float* in, float* out, std::size_t n, const minifloat_run_params<T>& p) noexcept {
  const T step_up = exp2i<T>(p.man_bits);
  const T step_down = exp2i<T>(-p.man_bits);
  const T min_normal = exp2i<T>(p.emin);
  const T inv_min_normal = exp2i<T>(-p.emin);
  for (std::size_t i = 0; i < n; ++i) {
    const T x = static_cast<T>(in[i]);
    int e = floor_log2_bits(std::abs(x));
    e = e < p.emin ? p.emin : e;
    e = e > p.emax ? p.emax : e;
    const T r = round_to_integer<R>(x * exp2i<T>(-e) * step_up);
    T y = r * step_down * exp2i<T>(e);
    if (!p.subnormals) {  // below the normal range only 0 and ±2^emin remain
      const T flushed = round_to_integer<R>(x * inv_min_normal) * min_normal;
      y = std::abs(y) < min_normal ? flushed : y;
    }
    y = std::abs(y) > p.max_value ? std::copysign(p.overflow_value, x) : y;
    out[i] = static_cast<float>(y);
  }
}

template <rounding R, class T>
void quantize_minifloat_kernel(const float* in, float* out, std::size_t n, const minifloat_fmt& f) noexcept {
  quantize_minifloat_run<R, T>(in, out, n, minifloat_params<T>(f));
}

}  // namespace detail

inline void quantize(const minifloat_fmt& f, std::span<const float> in, std::span<float> out) {
  require(in.size() == out.size(), "quantize(minifloat): input and output sizes differ");
  with_rounding(f.round, [&](auto mode) {
    constexpr rounding R = decltype(mode)::value;
    if (detail::minifloat_exact_in_float(f)) {
      detail::quantize_minifloat_kernel<R, float>(in.data(), out.data(), in.size(), f);
    } else {
      detail::quantize_minifloat_kernel<R, double>(in.data(), out.data(), in.size(), f);
    }
  });
}

template <minifloat_fmt F>
void quantize(std::span<const float> in, std::span<float> out) {
  static_assert((check(F), true));
  require(in.size() == out.size(), "quantize(minifloat): input and output sizes differ");
  using T = std::conditional_t<detail::minifloat_exact_in_float(F), float, double>;
  detail::quantize_minifloat_kernel<F.round, T>(in.data(), out.data(), in.size(), F);
}

// Codes: sign | exponent field | mantissa, exponent field = e + bias for normals, 0 for zero
// and subnormals. Without subnormals, field 0 holds only ±0.
inline std::uint64_t encode(const minifloat_fmt& f, float x) {
  float y = x;
  quantize(f, std::span<const float>(&x, 1), std::span<float>(&y, 1));
  const std::uint64_t sign = std::signbit(y) ? std::uint64_t{1} << (f.exp_bits + f.man_bits) : 0;
  const std::uint64_t top_field = (std::uint64_t{1} << f.exp_bits) - 1;
  const std::uint64_t man_mask = (std::uint64_t{1} << f.man_bits) - 1;
  if (std::isnan(y)) {
    require(f.has_nan(), "encode(minifloat): NaN has no code in a format without NaN");
    if (f.specials == special_values::nan_only) return sign | (top_field << f.man_bits) | man_mask;
    return sign | (top_field << f.man_bits) | (std::uint64_t{1} << (f.man_bits > 0 ? f.man_bits - 1 : 0));
  }
  if (std::isinf(y)) return sign | (top_field << f.man_bits);
  const double a = std::abs(static_cast<double>(y));
  if (a == 0) return sign;
  const int e = std::ilogb(a);
  if (e < f.emin()) {  // subnormal: field 0, mantissa counts steps of 2^(emin - man_bits)
    return sign | static_cast<std::uint64_t>(std::ldexp(a, f.man_bits - f.emin()));
  }
  const auto mantissa = static_cast<std::uint64_t>(std::ldexp(a, f.man_bits - e)) & man_mask;
  return sign | (static_cast<std::uint64_t>(e + f.bias) << f.man_bits) | mantissa;
}

inline float decode(const minifloat_fmt& f, std::uint64_t code) noexcept {
  const bool negative = (code >> (f.exp_bits + f.man_bits)) & 1u;
  const std::uint64_t top_field = (std::uint64_t{1} << f.exp_bits) - 1;
  const std::uint64_t field = (code >> f.man_bits) & top_field;
  const std::uint64_t mantissa = code & ((std::uint64_t{1} << f.man_bits) - 1);
  double a = 0;
  if (f.specials == special_values::ieee && field == top_field) {
    a = mantissa == 0 ? std::numeric_limits<double>::infinity() : std::numeric_limits<double>::quiet_NaN();
  } else if (f.specials == special_values::nan_only && field == top_field &&
             mantissa == (std::uint64_t{1} << f.man_bits) - 1) {
    a = std::numeric_limits<double>::quiet_NaN();
  } else if (field == 0) {
    a = f.subnormals ? std::ldexp(static_cast<double>(mantissa), f.emin() - f.man_bits) : 0.0;
  } else {
    a = std::ldexp(static_cast<double>(mantissa + (std::uint64_t{1} << f.man_bits)),
                   static_cast<int>(field) - f.bias - f.man_bits);
  }
  return static_cast<float>(negative ? -a : a);
}

}  // namespace mase
