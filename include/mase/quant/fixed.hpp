#pragma once
// Array quantizer, encoder and decoder for fixed point.
//
// y = bound(round(x * 2^frac)) * 2^-frac with the format's rounding and overflow rules
// (mase/format/rounding.hpp). One pass over memory; the loop body is branch-free for the
// saturating modes so the compiler vectorises it. Outputs are exact for widths up to 24 bits
// (every such value is a float32); wider formats round the value to the nearest float32.
//
// Non-finite inputs: NaN stays NaN; ±inf saturate to the largest / smallest value, in every
// overflow mode (wrap included: an infinite value has no low bits). A zero result may be -0.0
// for a negative input (two's complement has one zero: it encodes as 0 either way).

#include <mase/core/dispatch.hpp>
#include <mase/format/fixed.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>

namespace mase {

namespace detail {

// Whether float32 arithmetic is exact for format f: x * 2^frac never loses bits (frac >= 0),
// the bounds are float32 integers (width <= 24) and 2^-frac is a normal float32.
constexpr bool fixed_exact_in_float(const fixed_fmt& f) noexcept {
  return f.frac >= 0 && f.frac <= 126 && f.width <= 24;
}

// r: a rounded scaled value; x: the input it came from. An infinite x saturates; a finite x
// whose scaled value overflowed to inf is a multiple of 2^width (see fixed_code_of), so it wraps to 0.
template <class T>
T wrap_to_range(T r, float x, const integer_range& range, int width) noexcept {
  if (std::isinf(r)) return std::isinf(x) ? (r > 0 ? static_cast<T>(range.hi) : static_cast<T>(range.lo)) : T(0);
  const T modulus = static_cast<T>(std::ldexp(1.0, width));
  T m = std::fmod(r, modulus);  // exact
  if (m < static_cast<T>(range.lo)) m += modulus;
  if (m > static_cast<T>(range.hi)) m -= modulus;
  return m;
}

// The loop every fixed-point quantization runs (block formats call it once per block):
// y = clamp(round(x * scale), lo, hi) * unscale with power-of-two scales.
template <class T>
struct fixed_run_params {
  T scale, unscale, lo, hi;
};

template <class T>
fixed_run_params<T> fixed_params(const fixed_fmt& f) noexcept {
  const integer_range range = f.saturation_range();
  return {static_cast<T>(std::ldexp(1.0, f.frac)), static_cast<T>(std::ldexp(1.0, -f.frac)),
          static_cast<T>(range.lo), static_cast<T>(range.hi)};
}

template <rounding R, class T>
inline void quantize_fixed_run(const float* in, float* out, std::size_t n, const fixed_run_params<T>& p) noexcept {
  for (std::size_t i = 0; i < n; ++i) {
    T r = round_to_integer<R>(static_cast<T>(in[i]) * p.scale);
    r = r < p.lo ? p.lo : r;  // written so that NaN passes through both bounds
    r = p.hi < r ? p.hi : r;
    out[i] = static_cast<float>(r * p.unscale);
  }
}

template <rounding R, class T>
void quantize_fixed_kernel(const float* in, float* out, std::size_t n, const fixed_fmt& f) noexcept {
  const fixed_run_params<T> p = fixed_params<T>(f);
  if (f.ovf == overflow::wrap) {
    const integer_range range = f.code_range();
    for (std::size_t i = 0; i < n; ++i) {
      const T r = round_to_integer<R>(static_cast<T>(in[i]) * p.scale);
      out[i] = static_cast<float>((std::isnan(r) ? r : wrap_to_range(r, in[i], range, f.width)) * p.unscale);
    }
    return;
  }
  quantize_fixed_run<R, T>(in, out, n, p);
}

}  // namespace detail

// Quantizes in[i] into out[i]; `out` may be `in` (in place). Sizes must match.
inline void quantize(const fixed_fmt& f, std::span<const float> in, std::span<float> out) {
  require(in.size() == out.size(), "quantize(fixed): input and output sizes differ");
  with_rounding(f.round, [&](auto mode) {
    constexpr rounding R = decltype(mode)::value;
    if (detail::fixed_exact_in_float(f)) {
      dispatch::run<&detail::quantize_fixed_kernel<R, float>>(in.data(), out.data(), in.size(), f);
    } else {
      dispatch::run<&detail::quantize_fixed_kernel<R, double>>(in.data(), out.data(), in.size(), f);
    }
  });
}

// Compile-time format: the same kernel with every parameter folded.
template <fixed_fmt F>
void quantize(std::span<const float> in, std::span<float> out) {
  static_assert((check(F), true));
  require(in.size() == out.size(), "quantize(fixed): input and output sizes differ");
  using T = std::conditional_t<detail::fixed_exact_in_float(F), float, double>;
  detail::quantize_fixed_kernel<F.round, T>(in.data(), out.data(), in.size(), F);
}

// The width-bit code hardware stores (two's complement for signed formats), as MASE's
// integer_quantizer_for_hw. NaN encodes as 0.
inline std::uint64_t encode(const fixed_fmt& f, float x) noexcept {
  const std::int64_t raw = detail::fixed_code_of(static_cast<double>(x), f);
  return static_cast<std::uint64_t>(raw) & ((std::uint64_t{2} << (f.width - 1)) - 1);
}

inline float decode(const fixed_fmt& f, std::uint64_t code) noexcept {
  const auto raw = apply_overflow(static_cast<std::int64_t>(code), f.width, f.is_signed, overflow::wrap);
  return static_cast<float>(static_cast<double>(raw) * std::ldexp(1.0, -f.frac));
}

}  // namespace mase
