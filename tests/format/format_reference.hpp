#pragma once
// Test-side reference models of mase's number formats, written from the format definitions
// (the header comments, IEEE 754 and the OCP specifications), never from the library's code:
//
//   * code tables: every code of an element format and the exact value it stands for, in long double;
//   * rounding to a sorted grid of values with every rounding mode and tie rule, decided by
//     comparing 2x with lo + hi (exact in long double for the grids used here);
//   * the overflow policies (saturate, ±inf, NaN) and the log format's nearest-in-log2 rule.
//
// Half-even picks the neighbour whose value is an even multiple of the gap between the two
// neighbours. On every grid used here that is the neighbour with the even integer code (fixed
// point) or with the lowest mantissa bit 0 (minifloats, subnormals and the binade boundary
// included); for one-bit-mantissa-free minifloats (man_bits = 0) and the no-subnormal gap
// [0, 2^emin] it is the value rule that defines "even".
//
// Only formats' descriptor structs are used from the library (the thing under test is given
// as a descriptor; its meaning is computed here).

#include <mase/format/fixed.hpp>
#include <mase/format/log.hpp>
#include <mase/format/minifloat.hpp>
#include <mase/format/rounding.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iomanip>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace mase_test {

using ld = long double;

inline constexpr ld ld_inf = std::numeric_limits<ld>::infinity();
inline constexpr ld ld_nan = std::numeric_limits<ld>::quiet_NaN();

inline ld pow2(int e) { return std::ldexp(1.0L, e); }

// The integer a real value rounds to with mode r, from the mode names in words.
inline ld round_integer(ld v, mase::rounding r) {
  const ld lo = std::floor(v);
  const ld hi = lo + 1;
  if (lo == v) return v;
  switch (r) {
    case mase::rounding::floor: return lo;
    case mase::rounding::ceil: return hi;
    case mase::rounding::toward_zero: return v < 0 ? hi : lo;
    default: break;
  }
  const ld dlo = v - lo;
  const ld dhi = hi - v;
  if (dlo < dhi) return lo;
  if (dhi < dlo) return hi;
  switch (r) {
    case mase::rounding::half_up: return hi;
    case mase::rounding::half_down: return lo;
    case mase::rounding::half_toward_zero: return v < 0 ? hi : lo;
    case mase::rounding::half_away: return v < 0 ? lo : hi;
    default: return std::fmod(lo, 2.0L) == 0 ? lo : hi;  // half_even
  }
}

// ---------------------------------------------------------------------------------------------
// Grids and rounding to them.

struct grid {
  std::vector<ld> values;  // ascending, distinct, finite (one zero)
  ld below = 0;            // the value an unbounded grid would have just below values.front()
  ld above = 0;            // ... and just above values.back()
};

enum class side : std::uint8_t { inside, above, below };

struct grid_result {
  ld value;
  side where;  // `above` / `below`: the mode chose a value beyond the grid (or x lies beyond it)
};

// Rounds a finite x to the grid with mode r. Inputs beyond the virtual neighbours report
// `above` / `below` whatever the mode; the caller's overflow policy decides.
inline grid_result round_on_grid(const grid& g, ld x, mase::rounding r) {
  using mase::rounding;
  if (x >= g.above) return {g.above, side::above};
  if (x <= g.below) return {g.below, side::below};
  const auto& v = g.values;
  const auto it = std::upper_bound(v.begin(), v.end(), x);
  const ld lo = it == v.begin() ? g.below : *(it - 1);
  const ld hi = it == v.end() ? g.above : *it;
  auto classify = [&](ld y) -> grid_result {
    if (y == g.above && it == v.end()) return {y, side::above};
    if (y == g.below && it == v.begin()) return {y, side::below};
    return {y, side::inside};
  };
  if (lo == x) return classify(lo);
  switch (r) {
    case rounding::floor: return classify(lo);
    case rounding::ceil: return classify(hi);
    case rounding::toward_zero: return classify(x < 0 ? hi : lo);
    default: break;
  }
  const ld twice = 2 * x;
  const ld sum = lo + hi;
  if (twice < sum) return classify(lo);
  if (twice > sum) return classify(hi);
  switch (r) {
    case rounding::half_up: return classify(hi);
    case rounding::half_down: return classify(lo);
    case rounding::half_toward_zero: return classify(std::fabs(lo) < std::fabs(hi) ? lo : hi);
    case rounding::half_away: return classify(std::fabs(lo) < std::fabs(hi) ? hi : lo);
    default: {  // half_even: the even multiple of the gap
      const ld gap = hi - lo;
      return classify(std::fmod(lo / gap, 2.0L) == 0 ? lo : hi);
    }
  }
}

inline grid make_grid(std::vector<ld> values) {
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  grid g;
  g.values = std::move(values);
  return g;
}

// ---------------------------------------------------------------------------------------------
// Fixed point: value = raw * 2^-frac, raw a width-bit integer.

inline ld fixed_lo(const mase::fixed_fmt& f) { return f.is_signed ? -pow2(f.width - 1) : 0; }
inline ld fixed_hi(const mase::fixed_fmt& f) { return f.is_signed ? pow2(f.width - 1) - 1 : pow2(f.width) - 1; }

// The exact quantized value of x in format f, following the header's definition
// (round x * 2^frac to an integer, then bound it); NaN for NaN, ±inf saturate in every mode.
inline ld fixed_reference(const mase::fixed_fmt& f, ld x) {
  if (std::isnan(x)) return ld_nan;
  ld lo = fixed_lo(f);
  const ld hi = fixed_hi(f);
  if (f.ovf == mase::overflow::saturate_symmetric && f.is_signed) lo = -hi;
  if (std::isinf(x)) return (x > 0 ? hi : lo) * pow2(-f.frac);
  ld r = round_integer(x * pow2(f.frac), f.round);
  if (f.ovf == mase::overflow::wrap) {
    const ld modulus = pow2(f.width);
    r = std::fmod(r, modulus);  // exact
    if (r < fixed_lo(f)) r += modulus;
    if (r > hi) r -= modulus;
  } else {
    r = std::clamp(r, lo, hi);
  }
  return r * pow2(-f.frac);
}

inline grid fixed_grid(const mase::fixed_fmt& f) {
  std::vector<ld> values;
  const auto lo = static_cast<std::int64_t>(fixed_lo(f));
  const auto hi = static_cast<std::int64_t>(fixed_hi(f));
  for (std::int64_t raw = lo; raw <= hi; ++raw) values.push_back(static_cast<ld>(raw) * pow2(-f.frac));
  grid g = make_grid(std::move(values));
  g.below = static_cast<ld>(lo - 1) * pow2(-f.frac);
  g.above = static_cast<ld>(hi + 1) * pow2(-f.frac);
  return g;
}

// ---------------------------------------------------------------------------------------------
// Minifloat: sign | exponent field | mantissa, from the format definition.

enum class code_kind : std::uint8_t { number, pos_inf, neg_inf, nan, zero_alias };

struct code_entry {
  std::uint64_t code;
  code_kind kind;
  ld value;  // for numbers (a signed zero for -0); for zero_alias, the signed zero it stands for
};

inline std::vector<code_entry> minifloat_codes(const mase::minifloat_fmt& f) {
  std::vector<code_entry> codes;
  const int e_bits = f.exp_bits;
  const int m_bits = f.man_bits;
  const std::uint64_t count = std::uint64_t{1} << (1 + e_bits + m_bits);
  const std::uint64_t top = (std::uint64_t{1} << e_bits) - 1;
  const std::uint64_t man_all = (std::uint64_t{1} << m_bits) - 1;
  for (std::uint64_t c = 0; c < count; ++c) {
    const bool negative = ((c >> (e_bits + m_bits)) & 1) != 0;
    const std::uint64_t field = (c >> m_bits) & top;
    const std::uint64_t man = c & man_all;
    code_entry entry{c, code_kind::number, 0};
    if (f.specials == mase::special_values::ieee && field == top) {
      entry.kind = man == 0 ? (negative ? code_kind::neg_inf : code_kind::pos_inf) : code_kind::nan;
    } else if (f.specials == mase::special_values::nan_only && field == top && man == man_all) {
      entry.kind = code_kind::nan;
    } else if (field == 0) {
      if (f.subnormals || man == 0) {
        entry.value = std::ldexp(static_cast<ld>(man), 1 - f.bias - m_bits);
      } else {
        entry.kind = code_kind::zero_alias;
      }
    } else {
      entry.value = std::ldexp(static_cast<ld>(man + (std::uint64_t{1} << m_bits)),
                               static_cast<int>(field) - f.bias - m_bits);
    }
    if (negative) entry.value = -entry.value;
    if (negative && entry.value == 0) entry.value = -0.0L;
    codes.push_back(entry);
  }
  return codes;
}

// The grid of finite values and the next values an unbounded exponent field would give.
inline grid minifloat_grid(const mase::minifloat_fmt& f) {
  std::vector<ld> values;
  for (const code_entry& e : minifloat_codes(f))
    if (e.kind == code_kind::number) values.push_back(e.value == 0 ? 0.0L : e.value);
  grid g = make_grid(std::move(values));
  const ld max = g.values.back();
  const int emin = 1 - f.bias;
  int binade = emin;
  if (max > 0) {
    int e = 0;
    std::frexp(max, &e);
    binade = std::max(e - 1, emin);
  }
  g.above = max + pow2(binade - f.man_bits);
  g.below = -g.above;
  return g;
}

// What quantizing x to minifloat f gives, by IEEE 754 / OCP rules: round on the grid with the
// format's mode; a result beyond the largest finite value is ±max when the format saturates or
// when the rounding direction is toward the finite range (IEEE 754 §7.4: roundTowardZero and
// the directed mode toward zero carry the overflow to the largest finite number), else ±inf
// (formats with inf) or NaN. Zeros keep the sign of x. NaN stays NaN; ±inf gives ±inf where the
// format has inf, ±max when it saturates, else NaN.
inline ld minifloat_reference(const mase::minifloat_fmt& f, const grid& g, ld x) {
  using mase::rounding;
  const ld max = g.values.back();
  const ld overflow_value = f.saturating ? max : f.has_inf() ? ld_inf : ld_nan;
  if (std::isnan(x)) return ld_nan;
  if (std::isinf(x)) return x > 0 ? overflow_value : -overflow_value;
  const grid_result r = round_on_grid(g, x, f.round);
  ld y = r.value;
  if (r.where == side::above) {
    const bool toward_finite = f.round == rounding::floor || f.round == rounding::toward_zero;
    y = (f.saturating || toward_finite) ? max : overflow_value;
  } else if (r.where == side::below) {
    const bool toward_finite = f.round == rounding::ceil || f.round == rounding::toward_zero;
    y = (f.saturating || toward_finite) ? -max : -overflow_value;
  }
  if (y == 0) y = std::signbit(x) ? -0.0L : 0.0L;
  return y;
}

// ---------------------------------------------------------------------------------------------
// Log: sign | exponent code c, c = 0 is ±0, c >= 1 is ±2^(c - bias); nearest in log2 domain.

inline std::vector<ld> log_magnitudes(const mase::log_fmt& f) {
  std::vector<ld> m;
  for (int c = 1; c < (1 << (f.width - 1)); ++c) m.push_back(pow2(c - f.bias));
  return m;
}

// Rounds |x| to the nearest power of two of the format in log2 distance: between 2^a and 2^b
// (b = a + 1) the upper one wins iff x^2 >= 2^a * 2^b (exact in long double: x is a float);
// below the smallest power 2^emin, zero wins iff x^2 < 2^(2 emin - 1) (log2|x| < emin - 1/2);
// above the largest, saturate. The sign is kept (also on zero).
inline ld log_reference(const mase::log_fmt& f, const std::vector<ld>& magnitudes, ld x) {
  if (std::isnan(x)) return ld_nan;
  const ld a = std::fabs(x);
  ld y = 0;
  if (std::isinf(a) || a >= magnitudes.back()) {
    y = magnitudes.back();
  } else if (a < magnitudes.front()) {
    y = a * a < pow2(2 * (1 - f.bias) - 1) ? 0.0L : magnitudes.front();
  } else {
    const auto it = std::upper_bound(magnitudes.begin(), magnitudes.end(), a);
    const ld lo = *(it - 1);
    const ld hi = *it;
    y = (lo == a) ? lo : (a * a >= lo * hi ? hi : lo);
  }
  return std::signbit(x) ? -y : y;
}

// ---------------------------------------------------------------------------------------------
// Probe inputs around a grid: every value, every midpoint and its float neighbours (a random
// subset of midpoints when there are more than `max_midpoints`), values beyond the ends, the
// float extremes and random floats. Finite floats only, sorted ascending, -0 before +0.

inline float next_up(float x) { return std::nextafter(x, std::numeric_limits<float>::infinity()); }
inline float next_down(float x) { return std::nextafter(x, -std::numeric_limits<float>::infinity()); }

inline std::vector<float> probe_inputs(const grid& g, std::size_t max_midpoints, std::size_t random_count,
                                       std::uint64_t seed) {
  std::vector<float> in;
  auto add = [&](ld v) {
    const auto f = static_cast<float>(v);
    if (std::isfinite(f)) in.push_back(f);
  };
  std::vector<ld> ext;
  ext.reserve(g.values.size() + 2);
  ext.push_back(g.below);
  ext.insert(ext.end(), g.values.begin(), g.values.end());
  ext.push_back(g.above);
  for (ld v : ext) add(v);
  std::mt19937_64 rng(seed);
  const std::size_t gaps = ext.size() - 1;
  auto add_midpoint = [&](std::size_t i) {
    const auto m = static_cast<float>((ext[i] + ext[i + 1]) / 2);
    if (!std::isfinite(m)) return;
    in.push_back(m);
    in.push_back(next_up(m));
    in.push_back(next_down(m));
  };
  if (gaps <= max_midpoints) {
    for (std::size_t i = 0; i < gaps; ++i) add_midpoint(i);
  } else {
    for (std::size_t i = 0; i < 64 && i < gaps; ++i) add_midpoint(i);
    for (std::size_t i = gaps > 64 ? gaps - 64 : 0; i < gaps; ++i) add_midpoint(i);
    const std::size_t mid_zero = static_cast<std::size_t>(
        std::upper_bound(ext.begin(), ext.end(), 0.0L) - ext.begin());
    for (std::size_t i = (mid_zero > 32 ? mid_zero - 32 : 0); i < std::min(gaps, mid_zero + 32); ++i) add_midpoint(i);
    std::uniform_int_distribution<std::size_t> pick(0, gaps - 1);
    for (std::size_t k = 0; k < max_midpoints; ++k) add_midpoint(pick(rng));
  }
  for (ld s : {1.5L, 2.0L, 4.0L, 1e3L}) {
    add(g.above * s);
    add(g.below * s);
  }
  const float extremes[] = {0.0f,
                            -0.0f,
                            std::numeric_limits<float>::denorm_min(),
                            std::numeric_limits<float>::min(),
                            std::numeric_limits<float>::max(),
                            1e-45f,
                            1e-40f,
                            1e-30f,
                            1.0f,
                            3.0f,
                            1e10f,
                            1e30f};
  for (float e : extremes) {
    in.push_back(e);
    in.push_back(-e);
  }
  const ld span = std::max(std::fabs(g.below), std::fabs(g.above)) * 1.25L;
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  std::uniform_int_distribution<std::uint32_t> bits;
  for (std::size_t k = 0; k < random_count; ++k) {
    add(static_cast<ld>(uniform(rng)) * span);
    std::uint32_t b = bits(rng);
    float f = 0;
    std::memcpy(&f, &b, sizeof f);
    if (std::isfinite(f)) in.push_back(f);
  }
  std::sort(in.begin(), in.end(), [](float a, float b) {
    return a < b || (a == b && std::signbit(a) && !std::signbit(b));
  });
  in.erase(std::unique(in.begin(), in.end(),
                       [](float a, float b) { return a == b && std::signbit(a) == std::signbit(b); }),
           in.end());
  return in;
}

// ---------------------------------------------------------------------------------------------
// Reporting: exhaustive loops count mismatches and keep the first few descriptions, so one
// CHECK per format replaces millions of assertions.

inline std::string show(ld v) {
  std::ostringstream s;
  s << std::setprecision(21) << v << " (" << std::hexfloat << static_cast<double>(v) << ")";
  return s.str();
}

struct mismatch_log {
  std::size_t checked = 0;
  std::size_t failed = 0;
  std::string first;
  std::size_t mismatch_lines = 6;
  void fail(const std::string& what) {
    if (failed++ < mismatch_lines) first += "  " + what + "\n";
    // MASE_TEST_MISMATCHES=<file>: every mismatch, one per line, for triage
    static std::FILE* dump = [] {
      const char* path = std::getenv("MASE_TEST_MISMATCHES");
      return path ? std::fopen(path, "a") : nullptr;
    }();
    if (dump) std::fprintf(dump, "%s\n", what.c_str());
  }
  void check(bool ok, const std::string& what) {
    ++checked;
    if (!ok) fail(what);
  }
  template <class Describe>
  void check_lazy(bool ok, Describe&& describe) {
    ++checked;
    if (!ok) fail(describe());
  }
};

// Same value, same sign of zero (when `signed_zero`), both NaN counts as equal.
inline bool same_value(ld got, ld expected, bool signed_zero) {
  if (std::isnan(expected)) return std::isnan(got);
  if (got != expected) return false;
  return !signed_zero || got != 0 || std::signbit(got) == std::signbit(expected);
}

}  // namespace mase_test
