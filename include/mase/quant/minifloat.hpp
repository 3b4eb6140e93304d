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
// Signed zeros and values that round to zero keep their sign. Directed roundings overflow as
// IEEE 754 says: toward the finite range they give the largest finite value.

#include <mase/core/dispatch.hpp>
#include <mase/format/minifloat.hpp>

#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <type_traits>

namespace mase {

namespace detail {

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

// Whether the loop may run in float32: every scale factor below is a float32 and every result
// a float32. The top binade emax = 127 (bfloat16, and other 8-bit-exponent formats) fits as
// well when emin <= 0, with the results of the double loop: then x·2^-e is exact for every x
// (2^-127 is the one subnormal scale factor, see exp2i_negated), and a result that rounds up
// past 2^127 becomes inf where double holds 2^128; both exceed the largest finite value and
// take the same overflow path.
constexpr bool minifloat_run_fits_float(int emin, int emax, int man_bits) noexcept {
  return emin >= -126 && emin - man_bits >= -149 && (emax <= 126 || (emax == 127 && emin <= 0));
}

constexpr bool minifloat_exact_in_float(const minifloat_fmt& f) noexcept {
  return minifloat_run_fits_float(f.emin(), f.emax(), f.man_bits);
}

// 2^-e for a binade e in [-126, 127]: exp2i for the normal range, and 2^-127 (subnormal).
template <class T>
inline T exp2i_negated(int e) noexcept {
  if constexpr (sizeof(T) == 4) {
    const auto normal = static_cast<std::uint32_t>(127 - e) << 23;
    return std::bit_cast<float>(e == 127 ? std::uint32_t{0x00400000u} : normal);
  } else {
    return exp2i<T>(-e);
  }
}

// Whether x·2^(m-e) and r·2^(e-m) may each be one multiplication by a normal float32, for
// every binade e in [emin, emax], with the results of the two-step scaling below: with
// emin <= 0, x·2^-e is exact for every x (e > 0 only for |x| >= 2^e), and every factor is normal.
constexpr bool minifloat_run_scales_directly(int emin, int emax, int man_bits) noexcept {
  return emin <= 0 && emin - man_bits >= -126 && man_bits - emin <= 127 && man_bits - emax >= -126 &&
         emax - man_bits <= 127;
}

// Scales x into units of its binade's last place, rounds, scales back: powers of two, so
// round_to_integer is the one inexact step, except that for emin > 0 the two-step x·2^-e of a
// float32 loop underflows for tiny x (floor / ceil then see 0, not a tiny value). `Direct`:
// one multiplication each way (float32 where minifloat_run_scales_directly holds, the common
// case); else two.
template <rounding R, class T, bool Direct>
inline void quantize_minifloat_loop(const float* in, float* out, std::size_t n,
                                    const minifloat_run_params<T>& p) noexcept {
  const T step_up = exp2i<T>(p.man_bits);
  const T step_down = exp2i<T>(-p.man_bits);
  const T min_normal = exp2i<T>(p.emin);
  const T inv_min_normal = exp2i_negated<T>(p.emin);
  // IEEE 754 overflow: a directed rounding that points back toward the finite range gives the
  // largest finite value (floor of a huge positive x, ceil of a huge negative one); only
  // round-to-nearest and rounding away overflow to inf / NaN. Saturating formats pass
  // overflow_value == max_value, and an infinite input always takes overflow_value.
  constexpr bool positive_stays_finite = R == rounding::floor || R == rounding::toward_zero;
  constexpr bool negative_stays_finite = R == rounding::ceil || R == rounding::toward_zero;
  // Directed roundings must see a tiny x that two-step scaling underflowed to 0 as non-zero.
  auto keep_nonzero = [](T scaled, T x) {
    if constexpr (is_nearest(R)) {
      return scaled;
    } else {
      return scaled == T(0) && x != T(0) ? std::copysign(std::numeric_limits<T>::denorm_min(), x) : scaled;
    }
  };
  for (std::size_t i = 0; i < n; ++i) {
    const T x = static_cast<T>(in[i]);
    int e = floor_log2_bits(std::abs(x));
    e = e < p.emin ? p.emin : e;
    e = e > p.emax ? p.emax : e;
    T y;
    if constexpr (Direct) {
      y = round_to_integer<R>(x * exp2i<T>(p.man_bits - e)) * exp2i<T>(e - p.man_bits);
    } else {
      y = round_to_integer<R>(keep_nonzero(x * exp2i_negated<T>(e) * step_up, x)) * step_down * exp2i<T>(e);
    }
    if (!p.subnormals) {  // below the normal range only 0 and ±2^emin remain
      const T flushed = round_to_integer<R>(keep_nonzero(x * inv_min_normal, x)) * min_normal;
      y = std::abs(y) < min_normal ? flushed : y;
    }
    y = std::copysign(y, x);  // a result of zero keeps the input's sign, whatever the mode
    const bool stays_finite = (x > T(0) ? positive_stays_finite : negative_stays_finite) && !std::isinf(x);
    const T overflow_magnitude = stays_finite ? p.max_value : p.overflow_value;
    y = std::abs(y) > p.max_value ? std::copysign(overflow_magnitude, x) : y;
    out[i] = static_cast<float>(y);
  }
}

template <rounding R, class T>
inline void quantize_minifloat_run(const float* in, float* out, std::size_t n,
                                   const minifloat_run_params<T>& p) noexcept {
  if constexpr (std::is_same_v<T, float>) {
    if (minifloat_run_scales_directly(p.emin, p.emax, p.man_bits)) {
      quantize_minifloat_loop<R, T, true>(in, out, n, p);
      return;
    }
  }
  quantize_minifloat_loop<R, T, false>(in, out, n, p);
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
      dispatch::run<&detail::quantize_minifloat_kernel<R, float>>(in.data(), out.data(), in.size(), f);
    } else {
      dispatch::run<&detail::quantize_minifloat_kernel<R, double>>(in.data(), out.data(), in.size(), f);
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
