// The fixed<> value type and fixed_fmt's rules: the result-type algebra, raw words, constexpr
// conversions, casts between formats (every rounding and overflow mode), comparisons across
// formats and the descriptor's validity rules. Expected values come from exact arithmetic
// (small formats are enumerated at compile time) and from mase_test::fixed_reference, which
// is written from the definition value = raw * 2^-frac.
#include <mase/format/fixed.hpp>

#include "format_reference.hpp"

#include <catch2/catch.hpp>

#include <cfloat>
#include <compare>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>

using mase::fixed;
using mase::fixed_fmt;
using mase::overflow;
using mase::rounding;

template <int W, int F, rounding R = rounding::half_even, overflow O = overflow::saturate>
using ufixed = fixed<W, F, false, R, O>;

namespace {

// ---------------------------------------------------------------------------------------------
// The result-type algebra, as descriptors.

constexpr fixed_fmt s(int w, int f) { return {.width = w, .frac = f, .is_signed = true}; }
constexpr fixed_fmt u(int w, int f) { return {.width = w, .frac = f, .is_signed = false}; }

// product: widths and fractions add, signedness ORs
static_assert(mase::product_format(s(8, 3), s(6, 2)) == s(14, 5));
static_assert(mase::product_format(s(8, 3), u(6, 2)) == s(14, 5));
static_assert(mase::product_format(u(8, 3), u(6, -2)) == u(14, 1));
static_assert(mase::product_format(u(1, 0), s(1, 9)) == s(2, 9));
// sum: one more integer bit over the wider operand, the larger fraction
static_assert(mase::sum_format(s(8, 3), s(6, 1)) == s(9, 3));   // int bits 5 and 5 -> 6
static_assert(mase::sum_format(s(8, 3), s(12, 0)) == s(16, 3)); // int bits 5 and 12 -> 13
static_assert(mase::sum_format(s(4, -2), s(4, 3)) == s(10, 3)); // int bits 6 and 1 -> 7
static_assert(mase::sum_format(u(8, 0), u(8, 0)) == u(9, 0));
// unsigned + signed: the unsigned operand needs a sign bit of its own
static_assert(mase::sum_format(u(8, 0), s(8, 0)) == s(10, 0));
static_assert(mase::sum_format(s(8, 0), u(8, 0)) == s(10, 0));
static_assert(mase::sum_format(u(4, 4), s(8, 0)) == s(13, 4));  // int bits 0+1 and 8 -> 9
// difference: as the sum, always signed
static_assert(mase::difference_format(u(8, 0), u(8, 0)) == s(9, 0));
static_assert(mase::difference_format(s(8, 2), s(4, 4)) == s(11, 4));
static_assert(mase::difference_format(u(8, 0), s(8, 0)) == s(10, 0));
// negation: one more bit, signed
static_assert(mase::negation_format(s(8, 3)) == s(9, 3));
static_assert(mase::negation_format(u(8, 3)) == s(9, 3));
// accumulating n products: ceil(log2 n) more integer bits
static_assert(mase::accumulator_format(s(16, 6), 1) == s(16, 6));
static_assert(mase::accumulator_format(s(16, 6), 2) == s(17, 6));
static_assert(mase::accumulator_format(s(16, 6), 3) == s(18, 6));
static_assert(mase::accumulator_format(s(16, 6), 4) == s(18, 6));
static_assert(mase::accumulator_format(s(16, 6), 5) == s(19, 6));
static_assert(mase::accumulator_format(u(16, 6), 1024) == u(26, 6));
static_assert(mase::accumulator_format(u(16, 6), 1025) == u(27, 6));
static_assert(mase::accumulator_format(s(8, 0), std::int64_t{1} << 40) == s(48, 0));

// The same rules on the value types.
static_assert(std::is_same_v<decltype(fixed<8, 3>{} * fixed<6, 2>{}), fixed<14, 5>>);
static_assert(std::is_same_v<decltype(fixed<8, 3>{} * ufixed<6, 2>{}), fixed<14, 5>>);
static_assert(std::is_same_v<decltype(ufixed<8, 3>{} * ufixed<6, -2>{}), ufixed<14, 1>>);
static_assert(std::is_same_v<decltype(fixed<8, 3>{} + fixed<6, 1>{}), fixed<9, 3>>);
static_assert(std::is_same_v<decltype(ufixed<8, 0>{} + fixed<8, 0>{}), fixed<10, 0>>);
static_assert(std::is_same_v<decltype(ufixed<8, 0>{} + ufixed<8, 0>{}), ufixed<9, 0>>);
static_assert(std::is_same_v<decltype(ufixed<8, 0>{} - ufixed<8, 0>{}), fixed<9, 0>>);
static_assert(std::is_same_v<decltype(-fixed<8, 3>{}), fixed<9, 3>>);
static_assert(std::is_same_v<decltype(-ufixed<8, 3>{}), fixed<9, 3>>);
static_assert(std::is_same_v<decltype(+fixed<8, 3>{}), fixed<8, 3>>);
// results carry the default modes, whatever the operands' modes
static_assert(std::is_same_v<decltype(fixed<8, 3, true, rounding::floor, overflow::wrap>{} *
                                      fixed<8, 3, true, rounding::ceil, overflow::saturate_symmetric>{}),
                             fixed<16, 6>>);

// ---------------------------------------------------------------------------------------------
// Raw words: the smallest standard integer that holds the width.

static_assert(std::is_same_v<fixed<1, 0>::raw_type, std::int8_t>);
static_assert(std::is_same_v<fixed<8, 0>::raw_type, std::int8_t>);
static_assert(std::is_same_v<fixed<9, 0>::raw_type, std::int16_t>);
static_assert(std::is_same_v<fixed<16, 30>::raw_type, std::int16_t>);
static_assert(std::is_same_v<fixed<17, 0>::raw_type, std::int32_t>);
static_assert(std::is_same_v<fixed<32, -4>::raw_type, std::int32_t>);
static_assert(std::is_same_v<fixed<33, 0>::raw_type, std::int64_t>);
static_assert(std::is_same_v<fixed<63, 0>::raw_type, std::int64_t>);
static_assert(std::is_same_v<ufixed<1, 0>::raw_type, std::uint8_t>);
static_assert(std::is_same_v<ufixed<8, 0>::raw_type, std::uint8_t>);
static_assert(std::is_same_v<ufixed<9, 0>::raw_type, std::uint16_t>);
static_assert(std::is_same_v<ufixed<16, 0>::raw_type, std::uint16_t>);
static_assert(std::is_same_v<ufixed<17, 0>::raw_type, std::uint32_t>);
static_assert(std::is_same_v<ufixed<32, 0>::raw_type, std::uint32_t>);
static_assert(std::is_same_v<ufixed<33, 0>::raw_type, std::uint64_t>);
static_assert(std::is_same_v<ufixed<63, 0>::raw_type, std::uint64_t>);
static_assert(sizeof(fixed<8, 3>) == 1 && sizeof(fixed<12, 3>) == 2 && sizeof(fixed<20, 3>) == 4 &&
              sizeof(fixed<40, 3>) == 8);

// ---------------------------------------------------------------------------------------------
// constexpr conversions from and to double.

static_assert(fixed<8, 3>(1.375).raw() == 11);
static_assert(fixed<8, 3>(1.375).to_double() == 1.375);
static_assert(fixed<8, 3>(1.3).to_double() == 1.25);   // 10.4 steps -> 10
static_assert(fixed<8, 3>(-1.3).to_double() == -1.25);
static_assert(fixed<8, 3>(2).to_double() == 2.0);      // an integer is a value, not a raw code
static_assert(fixed<8, -2>(13.0).to_double() == 12.0); // steps of 4: 3.25 steps -> 3
static_assert(fixed<8, 10>(0.1).raw() == 102);         // 102.4 -> 102
static_assert(fixed<4, 8>(0.02).raw() == 5);           // frac > width: 5.12 -> 5
static_assert(static_cast<double>(fixed<8, 3>(0.5)) == 0.5);
static_assert(static_cast<float>(fixed<8, 3>(-0.125)) == -0.125f);
static_assert(fixed<8, 3>(0.5f).raw() == 4);
// saturation, symmetric saturation and wrapping (raw range of fixed<8,3>: [-128, 127])
static_assert(fixed<8, 3>(100.0).raw() == 127);
static_assert(fixed<8, 3>(-100.0).raw() == -128);
static_assert(fixed<8, 3, true, rounding::half_even, overflow::saturate_symmetric>(-100.0).raw() == -127);
static_assert(fixed<8, 3, true, rounding::half_even, overflow::saturate_symmetric>(100.0).raw() == 127);
static_assert(fixed<8, 3, true, rounding::half_even, overflow::wrap>(16.0).raw() == -128);   // 128 - 256
static_assert(fixed<8, 3, true, rounding::half_even, overflow::wrap>(17.5).raw() == -116);   // 140 - 256
static_assert(fixed<8, 3, true, rounding::half_even, overflow::wrap>(-16.125).raw() == 127); // -129 + 256
static_assert(ufixed<8, 3>(-1.0).raw() == 0);
static_assert(ufixed<8, 3>(40.0).raw() == 255);
static_assert(ufixed<8, 3, rounding::half_even, overflow::wrap>(-1.0).raw() == 248);  // -8 + 256
static_assert(ufixed<8, 3, rounding::half_even, overflow::saturate_symmetric>(-1.0).raw() == 0);
// non-finite values: NaN becomes 0 (±inf at compile time: tests/compile_fail/constexpr_infinity.cpp;
// at run time: the test case "non-finite values convert as documented" below)
static_assert(fixed<8, 3>(std::numeric_limits<double>::quiet_NaN()).raw() == 0);
// every mode on a tie and off a tie, from the mode names
template <rounding R>
constexpr std::int64_t r0(double v) {
  return fixed<8, 0, true, R>(v).raw();
}
static_assert(r0<rounding::floor>(2.5) == 2 && r0<rounding::floor>(-2.5) == -3 && r0<rounding::floor>(-2.25) == -3);
static_assert(r0<rounding::ceil>(2.5) == 3 && r0<rounding::ceil>(-2.5) == -2 && r0<rounding::ceil>(2.25) == 3);
static_assert(r0<rounding::toward_zero>(2.5) == 2 && r0<rounding::toward_zero>(-2.75) == -2);
static_assert(r0<rounding::half_up>(2.5) == 3 && r0<rounding::half_up>(-2.5) == -2 && r0<rounding::half_up>(2.25) == 2);
static_assert(r0<rounding::half_down>(2.5) == 2 && r0<rounding::half_down>(-2.5) == -3 && r0<rounding::half_down>(2.75) == 3);
static_assert(r0<rounding::half_toward_zero>(2.5) == 2 && r0<rounding::half_toward_zero>(-2.5) == -2);
static_assert(r0<rounding::half_away>(2.5) == 3 && r0<rounding::half_away>(-2.5) == -3);
static_assert(r0<rounding::half_even>(2.5) == 2 && r0<rounding::half_even>(3.5) == 4 &&
              r0<rounding::half_even>(-2.5) == -2 && r0<rounding::half_even>(-3.5) == -4);
// raw access, codes and the named values
static_assert(fixed<4, 0>::from_raw(9).raw() == -7);  // from_raw keeps the low bits
static_assert(fixed<8, 3>::from_raw(-1).code() == 0xff);
static_assert(fixed<5, 0>::from_raw(-1).code() == 31);
static_assert(ufixed<5, 0>::from_raw(31).code() == 31);
static_assert(fixed<8, 3>::max().to_double() == 15.875 && fixed<8, 3>::lowest().to_double() == -16.0);
static_assert(fixed<8, 3>::epsilon().to_double() == 0.125);
static_assert(ufixed<8, -2>::max().to_double() == 1020.0 && ufixed<8, -2>::lowest().to_double() == 0.0);
static_assert(fixed<63, 0>::max().raw() == (std::int64_t{1} << 62) - 1);
static_assert(fixed<63, 0>::lowest().raw() == -(std::int64_t{1} << 62));
static_assert(ufixed<63, 0>::max().raw() == (std::uint64_t{1} << 63) - 1);
static_assert(ufixed<63, 0>(1e30).raw() == (std::uint64_t{1} << 63) - 1);
static_assert(fixed<63, 0>(-1e30).raw() == -(std::int64_t{1} << 62));
static_assert(fixed<40, 10>(123456.75).to_double() == 123456.75);
// exact arithmetic on values
static_assert((fixed<8, 3>(1.5) * fixed<8, 3>(-2.25)).to_double() == -3.375);
static_assert((fixed<8, 3>(1.5) + ufixed<4, 1>(7.5)).to_double() == 9.0);
static_assert((ufixed<8, 0>(3.0) - ufixed<8, 0>(200.0)).to_double() == -197.0);
static_assert((-fixed<8, 0>(-128.0)).to_double() == 128.0);

// ---------------------------------------------------------------------------------------------
// Casts between formats at compile time: exact shift, then the target's rounding and overflow.

static_assert(fixed<5, 1, true, rounding::floor>(fixed<8, 3>::from_raw(-3)).raw() == -1);  // -0.75 steps
static_assert(fixed<5, 1, true, rounding::ceil>(fixed<8, 3>::from_raw(-3)).raw() == 0);
static_assert(fixed<5, 1>(fixed<8, 3>::from_raw(6)).raw() == 2);                            // 1.5 -> 2
static_assert(fixed<5, 1>(fixed<8, 3>::from_raw(10)).raw() == 2);                           // 2.5 -> 2
static_assert(fixed<5, 1>(fixed<8, 3>::from_raw(127)).raw() == 15);                         // saturate
static_assert(fixed<5, 1, true, rounding::floor, overflow::wrap>(fixed<8, 3>::from_raw(127)).raw() == -1);  // 31 - 32
static_assert(fixed<12, 6>(fixed<8, 3>::from_raw(-77)).raw() == -616);                      // widening: exact
static_assert(fixed<6, 5>(fixed<8, 3>::from_raw(40)).raw() == 31);                          // 5.0 saturates
static_assert(fixed<6, 5, true, rounding::half_even, overflow::wrap>(fixed<8, 3>::from_raw(9)).raw() == -28); // 36 - 64
static_assert(ufixed<4, 0>(fixed<8, 0>(-5.0)).raw() == 0);
static_assert(fixed<8, 0>(ufixed<8, 0>(200.0)).raw() == 127);
static_assert(fixed<63, 0>(ufixed<63, 0>::max()).raw() == (std::int64_t{1} << 62) - 1);
static_assert(fixed<8, 0, true, rounding::half_even, overflow::wrap>(fixed<8, -60>::from_raw(3)).raw() == 0);  // 3 * 2^60 mod 256

// ---------------------------------------------------------------------------------------------
// Laws on every value of small formats, evaluated by the compiler: the exact result types hold
// every sum, difference, product and negation, and comparisons across formats agree with the
// real values.

template <class A>
constexpr std::int64_t lo_raw() {
  return A::lowest().raw();
}
template <class A>
constexpr std::int64_t hi_raw() {
  return static_cast<std::int64_t>(A::max().raw());
}

template <class A, class B>
constexpr bool arithmetic_is_exact() {
  for (std::int64_t i = lo_raw<A>(); i <= hi_raw<A>(); ++i) {
    const A a = A::from_raw(i);
    if ((-a).to_double() != -a.to_double()) return false;
    for (std::int64_t j = lo_raw<B>(); j <= hi_raw<B>(); ++j) {
      const B b = B::from_raw(j);
      const double x = a.to_double();
      const double y = b.to_double();
      if ((a + b).to_double() != x + y) return false;
      if ((a - b).to_double() != x - y) return false;
      if ((a * b).to_double() != x * y) return false;
      if (((a <=> b) < 0) != (x < y) || ((a <=> b) == 0) != (x == y) || ((a <=> b) > 0) != (x > y)) return false;
      if ((a == b) != (x == y)) return false;
      if ((a < b) != (x < y) || (a >= b) != (x >= y)) return false;
    }
  }
  return true;
}

template <class A, class... Bs>
constexpr bool arithmetic_is_exact_with_all() {
  return (arithmetic_is_exact<A, Bs>() && ...);
}

template <class... Ts>
constexpr bool all_pairs_exact() {
  return (arithmetic_is_exact_with_all<Ts, Ts...>() && ...);
}

static_assert(all_pairs_exact<fixed<3, 1>, ufixed<3, 1>, fixed<4, -1>, ufixed<2, 3>, fixed<1, 0>, ufixed<1, 2>,
                              fixed<5, 0>>());

// ---------------------------------------------------------------------------------------------
// Casts and conversions at run time against the reference, for every mode.

using cast_source = fixed<8, 3>;

template <int W, int F, bool S, rounding R, overflow O>
void check_into(mase_test::mismatch_log& log) {
  using target = fixed<W, F, S, R, O>;
  // from every value of the source format
  for (std::int64_t raw = -128; raw <= 127; ++raw) {
    const cast_source from = cast_source::from_raw(raw);
    const target to(from);
    const mase_test::ld expected = mase_test::fixed_reference(target::format, from.to_double());
    log.check_lazy(to.to_double() == expected, [&] {
      return std::string(mase::to_string(R)) + ", " + std::string(mase::to_string(O)) + ": fixed<" +
             std::to_string(W) + "," + std::to_string(F) + (S ? "" : ",unsigned") + ">(" +
             std::to_string(from.to_double()) + ") = " + mase_test::show(to.to_double()) + ", expected " +
             mase_test::show(expected);
    });
  }
  // from doubles on a grid four times finer than the source, and beyond the range
  for (int k = -1200; k <= 1200; ++k) {
    const double x = k / 32.0;
    const target to(x);
    const mase_test::ld expected = mase_test::fixed_reference(target::format, x);
    log.check_lazy(to.to_double() == expected, [&] {
      return std::string(mase::to_string(R)) + ", " + std::string(mase::to_string(O)) + ": from double " +
             std::to_string(x) + " = " + mase_test::show(to.to_double()) + ", expected " + mase_test::show(expected);
    });
  }
}

template <int W, int F, bool S, std::size_t... I>
void check_into_all_modes(mase_test::mismatch_log& log, std::index_sequence<I...>) {
  (check_into<W, F, S, mase::all_roundings[I % 8], mase::all_overflows[I / 8]>(log), ...);
}

}  // namespace

TEST_CASE("casts between fixed formats round with the target's mode and bound with its overflow") {
  mase_test::mismatch_log log;
  // narrowing: two fraction bits dropped, one integer bit lost
  check_into_all_modes<5, 1, true>(log, std::make_index_sequence<24>{});
  check_into_all_modes<5, 1, false>(log, std::make_index_sequence<24>{});
  // widening the fraction: exact shift, then overflow
  check_into_all_modes<6, 5, true>(log, std::make_index_sequence<24>{});
  check_into_all_modes<6, 5, false>(log, std::make_index_sequence<24>{});
  // a coarser step than 1
  check_into_all_modes<4, -2, true>(log, std::make_index_sequence<24>{});
  INFO(log.first);
  CHECK(log.checked > 100000);
  CHECK(log.failed == 0);
}

TEST_CASE("fixed values convert to and from double at run time as at compile time") {
  // the same expressions as the static_asserts above, evaluated at run time
  volatile double v = 1.3;
  CHECK(fixed<8, 3>(v).to_double() == 1.25);
  v = -2.5;
  CHECK(+fixed<8, 0, true, rounding::half_away>(v).raw() == -3);
  CHECK(+fixed<8, 0, true, rounding::half_even>(v).raw() == -2);
  v = 17.5;
  CHECK(+fixed<8, 3, true, rounding::half_even, overflow::wrap>(v).raw() == -116);
  v = std::numeric_limits<double>::quiet_NaN();
  CHECK(+fixed<8, 3>(v).raw() == 0);
  v = -std::numeric_limits<double>::infinity();
  CHECK(+fixed<8, 3, true, rounding::half_even, overflow::wrap>(v).raw() == -128);
  // a 63-bit word: every raw value survives from_raw, and doubles that are integers convert exactly
  CHECK(+fixed<63, 0>::from_raw((std::int64_t{1} << 62) - 1).raw() == (std::int64_t{1} << 62) - 1);
  v = 0x1p61;
  CHECK(+fixed<63, 0>(v).raw() == (std::int64_t{1} << 61));
  v = -0x1p62;
  CHECK(+fixed<63, 0>(v).raw() == -(std::int64_t{1} << 62));
  v = 0x1p62;  // one past the top: saturates
  CHECK(+fixed<63, 0>(v).raw() == (std::int64_t{1} << 62) - 1);
  CHECK(+fixed<63, 0, true, rounding::half_even, overflow::wrap>(v).raw() == -(std::int64_t{1} << 62));
}

TEST_CASE("non-finite values convert as documented: NaN becomes 0, infinities saturate in every mode") {
  volatile double inf = std::numeric_limits<double>::infinity();
  CHECK(+fixed<8, 3>(inf).raw() == 127);
  CHECK(+fixed<8, 3>(-inf).raw() == -128);
  CHECK(+fixed<8, 3, true, rounding::half_even, overflow::wrap>(inf).raw() == 127);
  CHECK(+fixed<8, 3, true, rounding::floor, overflow::wrap>(-inf).raw() == -128);
  CHECK(+fixed<8, 3, true, rounding::floor, overflow::saturate_symmetric>(-inf).raw() == -127);
  CHECK(+fixed<8, 3, true, rounding::ceil>(inf).raw() == 127);
  CHECK(+ufixed<8, 3, rounding::toward_zero, overflow::wrap>(-inf).raw() == 0);
  CHECK(+ufixed<8, 3, rounding::toward_zero, overflow::wrap>(inf).raw() == 255);
  CHECK(+fixed<8, 3>(std::numeric_limits<float>::quiet_NaN()).raw() == 0);
  CHECK(+fixed<8, 3>(-0.0).raw() == 0);
}

TEST_CASE("wrapping a finite value whose scaled form exceeds double keeps its low bits") {
  // DBL_MAX * 2^1 is an integer with hundreds of trailing zero bits: modulo 2^8 it is 0.
  // The conversion must not treat the finite input as an infinity (that is for ±inf only).
  volatile double v = DBL_MAX;
  CHECK(+fixed<8, 1, true, rounding::half_even, overflow::wrap>(v).raw() == 0);
  v = -DBL_MAX;
  CHECK(+fixed<8, 1, true, rounding::half_even, overflow::wrap>(v).raw() == 0);
  // still finite after scaling: the reduction path
  v = 0x1.8p1000;
  CHECK(+fixed<8, 1, true, rounding::half_even, overflow::wrap>(v).raw() == 0);
  v = 0x1p70 + 0x1p20 + 0x1p19;  // beyond int64 but a double: 2^70 vanishes modulo 2^24
  CHECK(+fixed<24, 0, true, rounding::half_even, overflow::wrap>(v).raw() == (1 << 20) + (1 << 19));
  CHECK(+fixed<24, 1, true, rounding::half_even, overflow::wrap>(v).raw() == (1 << 21) + (1 << 20));
}

TEST_CASE("directed rounding of tiny values with a coarse step still moves to the next step") {
  // 1e-300 * 2^-100 underflows in double; ceil of a positive value is still one step (2^100),
  // floor of a negative value is minus one step.
  volatile double tiny = 1e-300;
  CHECK(+fixed<8, -100, true, rounding::ceil>(tiny).raw() == 1);
  CHECK(+fixed<8, -100, true, rounding::floor>(-tiny).raw() == -1);
  CHECK(+fixed<8, -100, true, rounding::half_even>(tiny).raw() == 0);
  tiny = 1e-200;  // no underflow: the ordinary path
  CHECK(+fixed<8, -100, true, rounding::ceil>(tiny).raw() == 1);
}

TEST_CASE("comparisons across formats are exact") {
  CHECK(fixed<8, 3>(1.5) == fixed<6, 1>(1.5));
  CHECK(fixed<8, 3>(1.625) != fixed<6, 1>(1.5));
  CHECK(fixed<8, 3>(1.625) > fixed<6, 1>(1.5));
  CHECK(ufixed<8, 0>(200.0) > fixed<8, 0>(100.0));
  CHECK(ufixed<8, 0>(0.0) > fixed<8, 0>(-1.0));
  CHECK(fixed<8, -4>(-64.0) < ufixed<2, 6>(0.0));
  CHECK((fixed<8, 3>(-2.0) <=> fixed<16, 10>(-2.0)) == std::strong_ordering::equal);
  CHECK((fixed<8, 3>(-2.125) <=> fixed<16, 10>(-2.0)) == std::strong_ordering::less);
}

TEST_CASE("comparisons across formats whose steps differ by more than the raw word can shift") {
  // Aligning 30000 (step 1) to a step of 2^-50 needs 30000 * 2^50 > 2^63: a comparison must not
  // overflow (or invoke undefined behaviour); it has to compare the real values.
  const fixed<16, 0> big(30000.0);
  const fixed<16, 50> small = fixed<16, 50>::epsilon();
  CHECK(big > small);
  CHECK(small < big);
  CHECK(big != small);
  CHECK(fixed<16, 0>(-30000.0) < small);
  CHECK(fixed<8, -40>::max() > fixed<8, 40>::max());
}

TEST_CASE("descriptor rules reject invalid fixed formats at run time with the rule's message") {
  using Catch::Contains;
  CHECK_NOTHROW(mase::check(fixed_fmt{.width = 1, .frac = 0}));
  CHECK_NOTHROW(mase::check(fixed_fmt{.width = 63, .frac = 512}));
  CHECK_NOTHROW(mase::check(fixed_fmt{.width = 63, .frac = -512, .is_signed = false}));
  CHECK_THROWS_AS(mase::check(fixed_fmt{.width = 0, .frac = 3}), mase::error);
  CHECK_THROWS_WITH(mase::check(fixed_fmt{.width = 0, .frac = 3}), Contains("the width must be at least 1 bit"));
  CHECK_THROWS_WITH(mase::check(fixed_fmt{.width = -4, .frac = 0}), Contains("the width must be at least 1 bit"));
  CHECK_THROWS_WITH(mase::check(fixed_fmt{.width = 64, .frac = 0}), Contains("at most 63 bits"));
  CHECK_THROWS_WITH(mase::check(fixed_fmt{.width = 8, .frac = 513}), Contains("[-512, 512]"));
  CHECK_THROWS_WITH(mase::check(fixed_fmt{.width = 8, .frac = -513}), Contains("[-512, 512]"));
}
