#pragma once
// The rounding and overflow rules of every format, written once.
//
// Every quantizer in mase reduces to "scale by a power of two, round to an integer, bound
// the integer, scale back". The rounding decision lives in `rounds_up` below and nowhere
// else: `round_to_integer` (floating inputs) and `shift_right_rounded` (raw integers, used by
// fixed-point casts and the bit-exact evaluator) both classify the discarded fraction and
// ask it. The fast paths for the common modes are checked against it exhaustively in the tests.

#include <bit>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <limits>
#include <string_view>
#include <type_traits>

namespace mase {

// Names follow what each mode does to the real value; ac_fixed / ap_fixed names in brackets.
enum class rounding : std::uint8_t {
  floor,             // toward -inf                 [AC_TRN]
  ceil,              // toward +inf
  toward_zero,       // truncate the magnitude      [AC_TRN_ZERO]
  half_up,           // nearest, ties toward +inf   [AC_RND]
  half_down,         // nearest, ties toward -inf   [AC_RND_MIN_INF]
  half_toward_zero,  // nearest, ties toward zero   [AC_RND_ZERO]
  half_away,         // nearest, ties away from zero [AC_RND_INF]
  half_even,         // nearest, ties to even       [AC_RND_CONV], torch.round
};

enum class overflow : std::uint8_t {
  saturate,            // clamp to [min, max]                 [AC_SAT]
  saturate_symmetric,  // clamp to [-max, max]                [AC_SAT_SYM]
  wrap,                // keep the low bits (two's complement) [AC_WRAP]
};

inline constexpr rounding all_roundings[] = {
    rounding::floor,     rounding::ceil,      rounding::toward_zero,      rounding::half_up,
    rounding::half_down, rounding::half_away, rounding::half_toward_zero, rounding::half_even};
inline constexpr overflow all_overflows[] = {overflow::saturate, overflow::saturate_symmetric,
                                             overflow::wrap};

constexpr std::string_view to_string(rounding r) noexcept {
  switch (r) {
    case rounding::floor: return "floor";
    case rounding::ceil: return "ceil";
    case rounding::toward_zero: return "toward_zero";
    case rounding::half_up: return "half_up";
    case rounding::half_down: return "half_down";
    case rounding::half_toward_zero: return "half_toward_zero";
    case rounding::half_away: return "half_away";
    case rounding::half_even: return "half_even";
  }
  return "?";
}

constexpr std::string_view to_string(overflow o) noexcept {
  switch (o) {
    case overflow::saturate: return "saturate";
    case overflow::saturate_symmetric: return "saturate_symmetric";
    case overflow::wrap: return "wrap";
  }
  return "?";
}

constexpr bool is_nearest(rounding r) noexcept {
  return r != rounding::floor && r != rounding::ceil && r != rounding::toward_zero;
}

// What lies between floor(v) and v, relative to one half.
enum class fraction : std::uint8_t { zero, below_half, half, above_half };

// THE rounding rule. A value v = floor(v) + frac rounds to floor(v) + (rounds_up ? 1 : 0).
// `floor_is_odd` is the parity of floor(v); `negative` says v < 0.
constexpr bool rounds_up(rounding r, fraction frac, bool floor_is_odd, bool negative) noexcept {
  if (frac == fraction::zero) return false;
  switch (r) {
    case rounding::floor: return false;
    case rounding::ceil: return true;
    case rounding::toward_zero: return negative;
    case rounding::half_up: return frac != fraction::below_half;
    case rounding::half_down: return frac == fraction::above_half;
    case rounding::half_toward_zero:
      return frac == fraction::above_half || (frac == fraction::half && negative);
    case rounding::half_away:
      return frac == fraction::above_half || (frac == fraction::half && !negative);
    case rounding::half_even:
      return frac == fraction::above_half || (frac == fraction::half && floor_is_odd);
  }
  return false;
}

namespace detail {

// constexpr floor for floating point (std::floor is constexpr only from C++23).
template <std::floating_point T>
constexpr T floor_constexpr(T v) noexcept {
  if (!std::is_constant_evaluated()) return std::floor(v);
  if (v != v || v == std::numeric_limits<T>::infinity() || v == -std::numeric_limits<T>::infinity())
    return v;
  constexpr T integral_limit = T(1) / std::numeric_limits<T>::epsilon();  // 2^mantissa bits
  if (v >= integral_limit || v <= -integral_limit) return v;              // already integral
  const auto truncated = static_cast<T>(static_cast<std::int64_t>(v));
  return truncated > v ? truncated - T(1) : truncated;
}

// Where v lies between its floor f and f + 1. Compares v with f + 0.5, which is exact (v - f
// is not: for v just above -0.5, v + 1 needs one more bit than v has). ±inf are integral.
template <std::floating_point T>
constexpr fraction classify_fraction(T v, T f) noexcept {
  if (v == f) return fraction::zero;
  const T midpoint = f + T(0.5);
  return v < midpoint ? fraction::below_half : v == midpoint ? fraction::half : fraction::above_half;
}

}  // namespace detail

// Rounds a finite floating value to an integral value of the same type with mode R.
// This is the definition; `round_to_integer` below picks equivalent single instructions
// where the hardware has them.
template <std::floating_point T>
constexpr T round_to_integer_reference(T v, rounding r) noexcept {
  const T f = detail::floor_constexpr(v);
  const T half_f = f * T(0.5);
  const bool odd = detail::floor_constexpr(half_f) != half_f;
  return rounds_up(r, detail::classify_fraction(v, f), odd, v < T(0)) ? f + T(1) : f;
}

// Fast, vectorisable spelling of the same rule for a mode known at compile time.
// NaN stays NaN, infinities stay infinite.
template <rounding R, std::floating_point T>
constexpr T round_to_integer(T v) noexcept {
  if (std::is_constant_evaluated()) return round_to_integer_reference(v, R);
  // GCC vectorises std::nearbyint (SSE4.1 roundps) but not floor / ceil / trunc / round under
  // its default -ftrapping-math, so every mode is derived from nearbyint r: the result is r or
  // r ± 1, chosen by comparisons added as numbers. (Written `r - bool`, GCC turns the correction
  // into a branch it will not vectorise; `r + float(-int(bool))` stays arithmetic.) Every mode's
  // result has the sign of v or is zero, so copysign restores the sign of zero.
  const auto plus = [](T x, bool add_one, bool subtract_one) {
    return x + static_cast<T>(static_cast<int>(add_one) - static_cast<int>(subtract_one));
  };
  if constexpr (R == rounding::half_even) {
    return std::nearbyint(v);  // default floating-point environment: ties to even
  } else if constexpr (R == rounding::floor) {
    const T r = std::nearbyint(v);
    return std::copysign(plus(r, false, r > v), v);
  } else if constexpr (R == rounding::ceil) {
    const T r = std::nearbyint(v);
    return std::copysign(plus(r, r < v, false), v);
  } else if constexpr (R == rounding::toward_zero) {
    const T a = std::abs(v);
    const T r = std::nearbyint(a);
    return std::copysign(plus(r, false, r > a), v);
  } else if constexpr (R == rounding::half_away) {
    const T a = std::abs(v);
    const T r = std::nearbyint(a);
    return std::copysign(plus(r, a - r == T(0.5), false), v);  // only a tie differs from r
  } else {
    // From the floor f: f + 0.5 is exact whenever v is not an integer (|v| < 2^(p-1)); for
    // integers (where f + 0.5 may round) the `v != f` term decides.
    const T r = std::nearbyint(v);
    const T f = plus(r, false, r > v);
    const T midpoint = f + T(0.5);
    bool up;
    if constexpr (R == rounding::half_up) {
      up = (v != f) & (v >= midpoint);  // `&`, not `&&`: no branch
    } else if constexpr (R == rounding::half_down) {
      up = (v != f) & (v > midpoint);
    } else {  // half_toward_zero
      up = (v != f) & ((v > midpoint) | ((v == midpoint) & (v < T(0))));
    }
    return std::copysign(plus(f, up, false), v);
  }
}

// Runtime-mode spelling: dispatches once to the compile-time version. Use the template
// form inside loops (hoist the switch out of the loop with `with_rounding`).
template <class F>
constexpr decltype(auto) with_rounding(rounding r, F&& f) {
  switch (r) {
    case rounding::floor: return f(std::integral_constant<rounding, rounding::floor>{});
    case rounding::ceil: return f(std::integral_constant<rounding, rounding::ceil>{});
    case rounding::toward_zero: return f(std::integral_constant<rounding, rounding::toward_zero>{});
    case rounding::half_up: return f(std::integral_constant<rounding, rounding::half_up>{});
    case rounding::half_down: return f(std::integral_constant<rounding, rounding::half_down>{});
    case rounding::half_toward_zero:
      return f(std::integral_constant<rounding, rounding::half_toward_zero>{});
    case rounding::half_away: return f(std::integral_constant<rounding, rounding::half_away>{});
    case rounding::half_even: break;
  }
  return f(std::integral_constant<rounding, rounding::half_even>{});
}

template <std::floating_point T>
constexpr T round_to_integer(T v, rounding r) noexcept {
  return with_rounding(r, [v](auto mode) { return round_to_integer<decltype(mode)::value>(v); });
}

// Arithmetic right shift of a raw integer by `shift` bits (0..62) with rounding: the integer
// twin of round_to_integer, used for fixed-point casts and the bit-exact evaluator.
constexpr std::int64_t shift_right_rounded(std::int64_t raw, int shift, rounding r) noexcept {
  if (shift <= 0) return raw;
  if (shift > 62) shift = 62;  // beyond the word: every bit is below the point
  const std::int64_t floor_q = raw >> shift;  // arithmetic shift: floor division
  const std::uint64_t mask = (std::uint64_t{1} << shift) - 1;
  const std::uint64_t rest = static_cast<std::uint64_t>(raw) & mask;
  const std::uint64_t half = std::uint64_t{1} << (shift - 1);
  const fraction frac = rest == 0      ? fraction::zero
                        : rest < half  ? fraction::below_half
                        : rest == half ? fraction::half
                                       : fraction::above_half;
  return floor_q + (rounds_up(r, frac, (floor_q & 1) != 0, raw < 0) ? 1 : 0);
}

// Bounds of a two's-complement or unsigned integer of `width` bits (1..64).
struct integer_range {
  std::int64_t lo;
  std::int64_t hi;  // for unsigned 64-bit the top is clipped to int64 max; mase limits raw words to 63 value bits
};

constexpr integer_range range_of(int width, bool is_signed) noexcept {
  if (is_signed) {
    if (width >= 64) return {std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max()};
    return {-(std::int64_t{1} << (width - 1)), (std::int64_t{1} << (width - 1)) - 1};
  }
  if (width >= 63) return {0, std::numeric_limits<std::int64_t>::max()};
  return {0, (std::int64_t{1} << width) - 1};
}

// THE saturation bounds: what a saturating overflow clamps a `width`-bit integer to, [-max, max]
// when symmetric and signed (the most negative code is never produced).
constexpr integer_range saturation_range(int width, bool is_signed, overflow o) noexcept {
  integer_range range = range_of(width, is_signed);
  if (o == overflow::saturate_symmetric && is_signed) range.lo = -range.hi;
  return range;
}

// THE overflow rule for integers: bring v into the range of a `width`-bit integer.
constexpr std::int64_t apply_overflow(std::int64_t v, int width, bool is_signed, overflow o) noexcept {
  switch (o) {
    case overflow::saturate:
    case overflow::saturate_symmetric: {
      const integer_range range = saturation_range(width, is_signed, o);
      return v < range.lo ? range.lo : v > range.hi ? range.hi : v;
    }
    case overflow::wrap: {
      if (width >= 64) return v;
      const std::uint64_t mask = (std::uint64_t{1} << width) - 1;
      std::uint64_t bits = static_cast<std::uint64_t>(v) & mask;
      if (is_signed && (bits >> (width - 1)) != 0) bits |= ~mask;  // sign-extend
      return static_cast<std::int64_t>(bits);
    }
  }
  return v;
}

}  // namespace mase
