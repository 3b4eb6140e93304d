#pragma once
// Fixed point: the descriptor `fixed_fmt`, its result-type algebra, and the value type `fixed`.
//
// value = raw * 2^-frac, raw a `width`-bit two's-complement (or unsigned) integer. As in MASE,
// `frac` may be negative (a step larger than 1) or larger than `width` (all bits fractional).

#include <mase/format/descriptor.hpp>
#include <mase/format/rounding.hpp>

#include <algorithm>
#include <compare>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

namespace mase {

struct fixed_fmt {
  int width = 8;
  int frac = 0;
  bool is_signed = true;
  rounding round = rounding::half_even;  // MASE's software quantizers: torch.round
  overflow ovf = overflow::saturate;

  constexpr bool operator==(const fixed_fmt&) const = default;

  constexpr int int_bits() const noexcept { return width - frac; }
  constexpr int bits() const noexcept { return width; }
  constexpr integer_range code_range() const noexcept { return range_of(width, is_signed); }
  // The codes saturation clamps to (format/rounding.hpp's saturation_range, with this overflow).
  constexpr integer_range saturation_range() const noexcept { return mase::saturation_range(width, is_signed, ovf); }
};

inline constexpr int max_fixed_width = 63;  // raw words are int64_t; unsigned keeps its top bit clear
inline constexpr int max_fixed_frac = 512;  // keeps 2^±frac a finite double

constexpr void check(const fixed_fmt& f) {
  detail::format_rule(f.width >= 1, "fixed: the width must be at least 1 bit");
  detail::format_rule(f.width <= max_fixed_width, "fixed: the width must be at most 63 bits (raw values are held in int64_t)");
  detail::format_rule(f.frac >= -max_fixed_frac && f.frac <= max_fixed_frac,
                   "fixed: the fraction width must lie in [-512, 512]");
}

// Result formats of exact arithmetic, as in ac_fixed: the result holds every possible value.
// Rounding and overflow modes of results are the defaults; they only act on explicit casts.
constexpr fixed_fmt product_format(const fixed_fmt& a, const fixed_fmt& b) noexcept {
  return {.width = a.width + b.width, .frac = a.frac + b.frac, .is_signed = a.is_signed || b.is_signed};
}

constexpr fixed_fmt sum_format(const fixed_fmt& a, const fixed_fmt& b) noexcept {
  // An unsigned operand added to a signed one needs one more integer bit to keep its range.
  const int int_a = a.int_bits() + (b.is_signed && !a.is_signed ? 1 : 0);
  const int int_b = b.int_bits() + (a.is_signed && !b.is_signed ? 1 : 0);
  const int frac = std::max(a.frac, b.frac);
  const int int_bits = std::max(int_a, int_b) + 1;
  return {.width = int_bits + frac, .frac = frac, .is_signed = a.is_signed || b.is_signed};
}

constexpr fixed_fmt difference_format(const fixed_fmt& a, const fixed_fmt& b) noexcept {
  fixed_fmt r = sum_format(a, b);
  if (!r.is_signed) {  // a - b of unsigned operands can be negative
    r.is_signed = true;
  }
  return r;
}

constexpr fixed_fmt negation_format(const fixed_fmt& a) noexcept {
  return {.width = a.width + 1, .frac = a.frac, .is_signed = true};
}

// Accumulating n products of format p (a dot product): ceil(log2 n) more integer bits.
constexpr fixed_fmt accumulator_format(const fixed_fmt& p, std::int64_t n) noexcept {
  int extra = 0;
  while (extra < 62 && (std::int64_t{1} << extra) < n) ++extra;
  if (extra == 62 && (std::int64_t{1} << extra) < n) extra = 63;
  return {.width = p.width + extra, .frac = p.frac, .is_signed = p.is_signed};
}

namespace detail {

template <int Width, bool Signed>
using fixed_word_t = std::conditional_t<
    Signed,
    std::conditional_t<(Width <= 8), std::int8_t,
                       std::conditional_t<(Width <= 16), std::int16_t,
                                          std::conditional_t<(Width <= 32), std::int32_t, std::int64_t>>>,
    std::conditional_t<(Width <= 8), std::uint8_t,
                       std::conditional_t<(Width <= 16), std::uint16_t,
                                          std::conditional_t<(Width <= 32), std::uint32_t, std::uint64_t>>>>;

constexpr double exp2_double(int e) noexcept {
  double r = 1.0;
  const double step = e < 0 ? 0.5 : 2.0;
  for (int i = 0; i < (e < 0 ? -e : e); ++i) r *= step;
  return r;
}

// The integer code of a real value in format f: scale, round with f.round, bound with f.ovf.
// NaN maps to 0 and infinities to the saturation bounds, whatever the overflow mode.
constexpr std::int64_t fixed_code_of(double v, const fixed_fmt& f) noexcept {
  const integer_range range = f.saturation_range();
  const std::int64_t lowest = range.lo;
  if (v != v) return 0;
  constexpr double infinity = std::numeric_limits<double>::infinity();
  if (v == infinity || v == -infinity) return v > 0 ? range.hi : lowest;
  double scaled = v * exp2_double(f.frac);  // exact unless it overflows or underflows
  if (scaled == infinity || scaled == -infinity) {
    // |v|·2^frac >= 2^1024 is a multiple of 2^(1024-53), so its low `width` bits are zero.
    if (f.ovf == overflow::wrap) return 0;
    return scaled > 0 ? range.hi : lowest;
  }
  if (scaled == 0 && v != 0) {
    // Underflow: the exact value is non-zero and far below 1/2; keep its sign so that directed
    // roundings (floor of a tiny negative is -1, ceil of a tiny positive is 1) still see it.
    scaled = v > 0 ? std::numeric_limits<double>::denorm_min() : -std::numeric_limits<double>::denorm_min();
  }
  const double rounded = round_to_integer_reference(scaled, f.round);
  constexpr double int64_limit = 9223372036854775808.0;  // 2^63
  if (rounded >= int64_limit || rounded < -int64_limit) {
    if (f.ovf != overflow::wrap) return rounded > 0 ? range.hi : lowest;
    // Wrapping a value beyond int64: only its low bits matter, and a double that large is a
    // multiple of 2^11. Subtract multiples of 2^width (exact) until it fits.
    double reduced = rounded;
    const double modulus = exp2_double(f.width);
    while (reduced >= int64_limit || reduced < -int64_limit) {
      double m = modulus;
      while (m * 2 <= (reduced < 0 ? -reduced : reduced)) m *= 2;
      reduced += reduced < 0 ? m : -m;
    }
    return apply_overflow(static_cast<std::int64_t>(reduced), f.width, f.is_signed, f.ovf);
  }
  return apply_overflow(static_cast<std::int64_t>(rounded), f.width, f.is_signed, f.ovf);
}

// Three-way comparison of x with y·2^shift (shift >= 0), exact for all int64 x, y.
constexpr std::strong_ordering compare_scaled(std::int64_t x, std::int64_t y, int shift) noexcept {
  if (y == 0) return x <=> 0;
  const bool fits = shift < 63 && y <= (std::numeric_limits<std::int64_t>::max() >> shift) &&
                    y >= (std::numeric_limits<std::int64_t>::min() >> shift);
  if (!fits) return y > 0 ? std::strong_ordering::less : std::strong_ordering::greater;  // |y·2^shift| > any x
  return x <=> y * (std::int64_t{1} << shift);
}

}  // namespace detail

// A fixed-point number whose format is part of its type: fixed<8, 3> holds raw * 2^-3 in an
// int8_t. Arithmetic is exact and grows the type; casts (explicit construction from another
// fixed or from a floating value) round with R and bound with O.
template <int W, int F, bool S = true, rounding R = rounding::half_even, overflow O = overflow::saturate>
class fixed {
public:
  static constexpr fixed_fmt format{.width = W, .frac = F, .is_signed = S, .round = R, .ovf = O};

private:
  static constexpr bool format_is_valid = (check(format), true);
  static_assert(format_is_valid);

public:
  using raw_type = detail::fixed_word_t<W, S>;

  constexpr fixed() noexcept = default;

  // From a floating value: round, then bound. NaN becomes 0; ±inf saturate.
  template <std::floating_point T>
  constexpr explicit fixed(T value) noexcept
      : raw_(static_cast<raw_type>(detail::fixed_code_of(static_cast<double>(value), format))) {}

  // From an integer value (not a raw code: fixed<8,3>(2) is 2.0).
  template <std::integral T>
  constexpr explicit fixed(T value) noexcept : fixed(static_cast<double>(value)) {}

  // Cast from another fixed format: exact shift, then this type's rounding and overflow.
  template <int W2, int F2, bool S2, rounding R2, overflow O2>
  constexpr explicit fixed(const fixed<W2, F2, S2, R2, O2>& other) noexcept
      : raw_(static_cast<raw_type>(cast_raw(other.raw(), F2))) {}

  static constexpr fixed from_raw(std::int64_t code) noexcept {
    fixed r;
    r.raw_ = static_cast<raw_type>(apply_overflow(code, W, S, overflow::wrap));
    return r;
  }

  constexpr raw_type raw() const noexcept { return raw_; }
  // The code hardware stores: the raw bits as an unsigned width-bit pattern.
  constexpr std::uint64_t code() const noexcept {
    return static_cast<std::uint64_t>(static_cast<std::int64_t>(raw_)) &
           (W >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << W) - 1);
  }

  constexpr double to_double() const noexcept {
    return static_cast<double>(raw_) * detail::exp2_double(-F);
  }
  constexpr float to_float() const noexcept { return static_cast<float>(to_double()); }
  constexpr explicit operator double() const noexcept { return to_double(); }
  constexpr explicit operator float() const noexcept { return to_float(); }

  static constexpr fixed max() noexcept { return from_raw(format.code_range().hi); }
  static constexpr fixed lowest() noexcept { return from_raw(format.code_range().lo); }
  static constexpr fixed epsilon() noexcept { return from_raw(1); }

  constexpr auto operator-() const noexcept {
    using result = fixed<W + 1, F, true>;
    return result::from_raw(-static_cast<std::int64_t>(raw_));
  }
  constexpr fixed operator+() const noexcept { return *this; }

private:
  template <int, int, bool, rounding, overflow>
  friend class fixed;

  static constexpr std::int64_t cast_raw(std::int64_t raw, int from_frac) noexcept {
    const int shift = from_frac - F;
    if (shift > 0) return apply_overflow(shift_right_rounded(raw, shift, R), W, S, O);
    // Widening the fraction: shift left, saturating before the word overflows.
    const int left = -shift;
    if (left >= 63 || (raw != 0 && (raw > (std::numeric_limits<std::int64_t>::max() >> left) ||
                                    raw < (std::numeric_limits<std::int64_t>::min() >> left)))) {
      if (O == overflow::wrap) {
        return left >= 63 ? 0 : apply_overflow(static_cast<std::int64_t>(static_cast<std::uint64_t>(raw) << left), W, S, O);
      }
      return raw > 0 ? saturation_range(W, S, O).hi : saturation_range(W, S, O).lo;
    }
    return apply_overflow(raw * (std::int64_t{1} << left), W, S, O);
  }

  raw_type raw_ = 0;
};

// fixed_of<fixed_fmt{...}>: the value type of a descriptor.
template <fixed_fmt Fmt>
using fixed_of = fixed<Fmt.width, Fmt.frac, Fmt.is_signed, Fmt.round, Fmt.ovf>;

template <class T>
inline constexpr bool is_fixed_v = false;
template <int W, int F, bool S, rounding R, overflow O>
inline constexpr bool is_fixed_v<fixed<W, F, S, R, O>> = true;

template <class T>
concept fixed_point = is_fixed_v<std::remove_cvref_t<T>>;

namespace detail {

// a's raw value in units of 2^-to_frac (to_frac >= a's frac; the caller's result type fits).
template <fixed_point A>
constexpr std::int64_t aligned_raw(const A& a, int to_frac) noexcept {
  return static_cast<std::int64_t>(a.raw()) * (std::int64_t{1} << (to_frac - A::format.frac));
}

template <fixed_fmt Result>
constexpr void require_fits_word() noexcept {
  static_assert(Result.width <= max_fixed_width,
                "the exact result of this fixed-point operation needs more than 63 bits; "
                "cast an operand to a narrower fixed<> first");
}

}  // namespace detail

template <fixed_point A, fixed_point B>
constexpr auto operator*(const A& a, const B& b) noexcept {
  constexpr fixed_fmt r = product_format(A::format, B::format);
  detail::require_fits_word<r>();
  return fixed_of<r>::from_raw(static_cast<std::int64_t>(a.raw()) * static_cast<std::int64_t>(b.raw()));
}

template <fixed_point A, fixed_point B>
constexpr auto operator+(const A& a, const B& b) noexcept {
  constexpr fixed_fmt r = sum_format(A::format, B::format);
  detail::require_fits_word<r>();
  return fixed_of<r>::from_raw(detail::aligned_raw(a, r.frac) + detail::aligned_raw(b, r.frac));
}

template <fixed_point A, fixed_point B>
constexpr auto operator-(const A& a, const B& b) noexcept {
  constexpr fixed_fmt r = difference_format(A::format, B::format);
  detail::require_fits_word<r>();
  return fixed_of<r>::from_raw(detail::aligned_raw(a, r.frac) - detail::aligned_raw(b, r.frac));
}

// Comparison is exact across formats, whatever their steps.
template <fixed_point A, fixed_point B>
constexpr std::strong_ordering operator<=>(const A& a, const B& b) noexcept {
  constexpr int shift = A::format.frac - B::format.frac;
  if constexpr (shift >= 0) {
    return detail::compare_scaled(a.raw(), b.raw(), shift);
  } else {
    return 0 <=> detail::compare_scaled(b.raw(), a.raw(), -shift);
  }
}

template <fixed_point A, fixed_point B>
constexpr bool operator==(const A& a, const B& b) noexcept {
  return (a <=> b) == 0;
}

// Arithmetic with floating values is deliberately absent: say which format you mean with an
// explicit cast, e.g. `x * fixed<8, 4>(0.5)`.
template <fixed_point A, std::floating_point T>
void operator*(const A&, T) = delete;
template <fixed_point A, std::floating_point T>
void operator*(T, const A&) = delete;
template <fixed_point A, std::floating_point T>
void operator+(const A&, T) = delete;
template <fixed_point A, std::floating_point T>
void operator+(T, const A&) = delete;

}  // namespace mase
