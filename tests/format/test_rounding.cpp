#include <mase/format/rounding.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>

using namespace mase;

namespace {

// Independent reference: the nearest integers below and above, chosen by distance and the
// tie rule stated in words, in long double.
long double reference_round(long double v, rounding r) {
  const long double lo = std::floor(v);
  const long double hi = lo + 1;
  if (lo == v) return v;
  const long double dlo = v - lo;
  const long double dhi = hi - v;
  switch (r) {
    case rounding::floor: return lo;
    case rounding::ceil: return hi;
    case rounding::toward_zero: return v < 0 ? hi : lo;
    default: break;
  }
  if (dlo < dhi) return lo;
  if (dhi < dlo) return hi;
  switch (r) {  // exact tie
    case rounding::half_up: return hi;
    case rounding::half_down: return lo;
    case rounding::half_toward_zero: return v < 0 ? hi : lo;
    case rounding::half_away: return v < 0 ? lo : hi;
    case rounding::half_even: return std::fmod(lo, 2.0L) == 0 ? lo : hi;
    default: return lo;
  }
}

}  // namespace

TEST_CASE("round_to_integer agrees with the reference for every mode on quarter steps") {
  for (rounding r : all_roundings) {
    for (int q = -4096; q <= 4096; ++q) {
      const double v = q / 8.0;
      const auto expected = static_cast<double>(reference_round(v, r));
      INFO("mode " << to_string(r) << " value " << v);
      CHECK(round_to_integer(v, r) == expected);
      CHECK(round_to_integer_reference(v, r) == expected);
      CHECK(round_to_integer(static_cast<float>(v), r) == static_cast<float>(expected));
    }
  }
}

TEST_CASE("shift_right_rounded is the integer twin of round_to_integer") {
  for (rounding r : all_roundings) {
    for (int shift = 1; shift <= 5; ++shift) {
      for (std::int64_t raw = -300; raw <= 300; ++raw) {
        const long double v = static_cast<long double>(raw) / (1 << shift);
        INFO("mode " << to_string(r) << " raw " << raw << " shift " << shift);
        CHECK(shift_right_rounded(raw, shift, r) == static_cast<std::int64_t>(reference_round(v, r)));
      }
    }
  }
}

TEST_CASE("rounding is usable in constant expressions") {
  STATIC_REQUIRE(round_to_integer<rounding::half_even>(2.5) == 2.0);
  STATIC_REQUIRE(round_to_integer<rounding::half_even>(-3.5) == -4.0);
  STATIC_REQUIRE(round_to_integer<rounding::half_away>(-2.5) == -3.0);
  STATIC_REQUIRE(round_to_integer<rounding::floor>(-0.25) == -1.0);
  STATIC_REQUIRE(shift_right_rounded(-3, 1, rounding::half_even) == -2);
}

TEST_CASE("apply_overflow saturates, saturates symmetrically and wraps") {
  CHECK(apply_overflow(200, 8, true, overflow::saturate) == 127);
  CHECK(apply_overflow(-200, 8, true, overflow::saturate) == -128);
  CHECK(apply_overflow(-200, 8, true, overflow::saturate_symmetric) == -127);
  CHECK(apply_overflow(200, 8, true, overflow::wrap) == 200 - 256);
  CHECK(apply_overflow(-129, 8, true, overflow::wrap) == 127);
  CHECK(apply_overflow(300, 8, false, overflow::wrap) == 300 - 256);
  CHECK(apply_overflow(-1, 8, false, overflow::saturate) == 0);
  for (std::int64_t v = -1000; v <= 1000; ++v) {
    const auto w = apply_overflow(v, 6, true, overflow::wrap);
    CHECK(((v - w) % 64) == 0);
    CHECK(w >= -32);
    CHECK(w <= 31);
  }
}

TEST_CASE("values just above -1/2 and just below 1/2 round to zero in every nearest mode") {
  // v - floor(v) is inexact here: -0x1.fffffep-2f + 1 rounds to 0.5 in float32.
  for (rounding r : {rounding::half_up, rounding::half_down, rounding::half_toward_zero, rounding::half_away,
                     rounding::half_even}) {
    INFO(to_string(r));
    CHECK(round_to_integer(-0x1.fffffep-2f, r) == 0.0f);
    CHECK(round_to_integer(0x1.fffffep-2f, r) == 0.0f);
    CHECK(round_to_integer(-0x1.fffffffffffffp-2, r) == 0.0);
    CHECK(round_to_integer_reference(-0x1.fffffep-2f, r) == 0.0f);
    CHECK(round_to_integer_reference(-0x1.fffffffffffffp-2, r) == 0.0);
  }
}

TEST_CASE("infinities are integral in constant expressions") {
  constexpr double inf = std::numeric_limits<double>::infinity();
  STATIC_REQUIRE(round_to_integer<rounding::half_even>(inf) == inf);
  STATIC_REQUIRE(round_to_integer<rounding::half_down>(-inf) == -inf);
}

TEST_CASE("large integral values are fixed points of every mode (f + 0.5 is inexact there)") {
  for (rounding r : all_roundings) {
    INFO(to_string(r));
    for (float v : {0x1p23f, 0x1p23f + 1, 0x1p24f + 2, -0x1p23f - 1, 0x1.73ca3p+23f, -0x1.7038c6p+24f, 0x1p100f}) {
      CHECK(round_to_integer(v, r) == v);
      CHECK(round_to_integer(static_cast<double>(v) * 0x1p30, r) == static_cast<double>(v) * 0x1p30);
    }
  }
}
