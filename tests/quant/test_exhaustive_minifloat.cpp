// Exhaustive tests of the minifloat quantizer, encoder and decoder: the OCP formats (e4m3,
// e5m2, e3m2, e2m3, e2m1, and the saturating e4m3/e5m2 of MX), float16, bfloat16 and a spread
// of minifloat<W,E,B> up to 16 bits with subnormals on and off, ieee / nan_only / finite
// specials, saturating or not, under every rounding mode. For each format:
//   (a) every code decodes to the value the format definition gives it (mase_test::minifloat_codes)
//       and encodes back to itself: -0 and +0 are distinct codes; NaN codes re-encode to a NaN
//       code; codes with exponent field 0 and a non-zero mantissa in formats without subnormals
//       are aliases of ±0; ±inf of a saturating format encode as ±max (documented);
//   (b) quantize is idempotent on every decoded value;
//   (c) sorted inputs give sorted outputs;
//   (d) every probe input (values, midpoints, midpoints ± 1 float ulp, values beyond the range,
//       float extremes, random floats) gives mase_test::minifloat_reference's value (nearest with
//       the mode's tie rule, directed modes, IEEE overflow), through quantize and decode(encode(x)).
// MASE_EXHAUSTIVE_LEVEL=0 runs a sample.
#include <mase/quant/minifloat.hpp>

#include "../format/format_reference.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

using mase::minifloat_fmt;
using mase::rounding;
using mase::special_values;
using mase_test::code_kind;
using mase_test::ld;

namespace {

std::string describe(const minifloat_fmt& f) {
  const char* sv = f.specials == special_values::ieee ? "ieee" : f.specials == special_values::nan_only ? "nan_only" : "finite";
  return "minifloat<" + std::to_string(f.bits()) + "," + std::to_string(f.exp_bits) + "," + std::to_string(f.bias) + "," +
         sv + (f.saturating ? ",saturating" : "") + (f.subnormals ? "" : ",no_subnormals") + "," +
         std::string(mase::to_string(f.round)) + ">";
}

bool valid(const minifloat_fmt& f) {
  try {
    mase::check(f);
    return true;
  } catch (const mase::error&) {
    return false;
  }
}

void check_format(const minifloat_fmt& f, mase_test::mismatch_log& log) {
  const std::string name = describe(f);
  const std::vector<mase_test::code_entry> table = mase_test::minifloat_codes(f);
  const mase_test::grid g = mase_test::minifloat_grid(f);
  const ld max = g.values.back();
  const std::uint64_t sign_bit = std::uint64_t{1} << (f.exp_bits + f.man_bits);
  auto code_of_max = [&](bool negative) {
    for (const auto& e : table)
      if (e.kind == code_kind::number && std::fabs(e.value) == max && std::signbit(e.value) == negative &&
          (max != 0 || (e.code & ~sign_bit) == 0))
        return e.code;
    return ~std::uint64_t{0};
  };

  // (a) decode and re-encode every code
  std::vector<float> decoded(table.size());
  for (const mase_test::code_entry& e : table) {
    const float v = mase::decode(f, e.code);
    decoded[e.code] = v;
    const bool negative = (e.code & sign_bit) != 0;
    ld expected = e.value;
    if (e.kind == code_kind::pos_inf) expected = mase_test::ld_inf;
    if (e.kind == code_kind::neg_inf) expected = -mase_test::ld_inf;
    if (e.kind == code_kind::nan) expected = mase_test::ld_nan;
    log.check_lazy(mase_test::same_value(v, expected, true), [&] {
      return name + ": decode(" + std::to_string(e.code) + ") = " + mase_test::show(v) + ", expected " +
             mase_test::show(expected);
    });
    if (e.kind == code_kind::nan) {
      const std::uint64_t back = mase::encode(f, v);
      log.check_lazy(back < table.size() && table[back].kind == code_kind::nan, [&] {
        return name + ": encode(decode(NaN code " + std::to_string(e.code) + ")) = " + std::to_string(back) +
               " is not a NaN code";
      });
      continue;
    }
    std::uint64_t expected_code = e.code;
    if (e.kind == code_kind::zero_alias) expected_code = negative ? sign_bit : 0;
    if ((e.kind == code_kind::pos_inf || e.kind == code_kind::neg_inf) && f.saturating) expected_code = code_of_max(negative);
    const std::uint64_t back = mase::encode(f, v);
    log.check_lazy(back == expected_code, [&] {
      return name + ": encode(decode(" + std::to_string(e.code) + ") = " + mase_test::show(v) + ") = " +
             std::to_string(back) + ", expected " + std::to_string(expected_code);
    });
  }

  // (b) idempotence on every decoded value
  std::vector<float> requantized(decoded.size());
  mase::quantize(f, decoded, requantized);
  for (std::size_t c = 0; c < decoded.size(); ++c) {
    ld expected = decoded[c];
    if (std::isinf(decoded[c]) && f.saturating) expected = decoded[c] > 0 ? max : -max;
    log.check_lazy(mase_test::same_value(requantized[c], expected, true), [&] {
      return name + ": quantize(decode(" + std::to_string(c) + ") = " + mase_test::show(decoded[c]) + ") = " +
             mase_test::show(requantized[c]) + ", expected " + mase_test::show(expected);
    });
  }

  // (c), (d)
  const std::size_t max_midpoints = MASE_EXHAUSTIVE_LEVEL >= 1 ? (f.bits() <= 12 ? 8192 : 4000) : 800;
  const std::vector<float> in = mase_test::probe_inputs(
      g, max_midpoints, 400, 0xf10a7000u + static_cast<std::uint64_t>(f.bits() * 977 + f.exp_bits * 31 + f.bias));
  std::vector<float> out(in.size());
  mase::quantize(f, in, out);
  float previous = -std::numeric_limits<float>::infinity();
  std::size_t previous_index = 0;
  for (std::size_t i = 0; i < in.size(); ++i) {
    const ld expected = mase_test::minifloat_reference(f, g, in[i]);
    log.check_lazy(mase_test::same_value(out[i], expected, true), [&] {
      return name + ": quantize(" + mase_test::show(in[i]) + ") = " + mase_test::show(out[i]) + ", expected " +
             mase_test::show(expected);
    });
    if (!std::isnan(expected) || f.has_nan()) {
      const float via_code = mase::decode(f, mase::encode(f, in[i]));
      log.check_lazy(mase_test::same_value(via_code, expected, true), [&] {
        return name + ": decode(encode(" + mase_test::show(in[i]) + ")) = " + mase_test::show(via_code) +
               ", expected " + mase_test::show(expected);
      });
    }
    if (!std::isnan(out[i])) {
      log.check_lazy(previous <= out[i], [&] {
        return name + ": not monotone: quantize(" + mase_test::show(in[previous_index]) + ") = " +
               mase_test::show(previous) + " > quantize(" + mase_test::show(in[i]) + ") = " + mase_test::show(out[i]);
      });
      previous = out[i];
      previous_index = i;
    }
  }
}

std::vector<rounding> roundings_for(int bits) {
  if (MASE_EXHAUSTIVE_LEVEL >= 1 || bits <= 6) return {std::begin(mase::all_roundings), std::end(mase::all_roundings)};
  return {rounding::half_even, rounding::floor, rounding::half_up};
}

}  // namespace

TEST_CASE("minifloat: stated facts of the IEEE and OCP formats") {
  // (code, value) pairs from IEEE 754 binary16, bfloat16, OCP OFP8 and OCP MX v1.0.
  struct fact {
    minifloat_fmt f;
    std::uint64_t code;
    ld value;
  };
  const ld nan = mase_test::ld_nan;
  const ld inf = mase_test::ld_inf;
  const std::vector<fact> facts = {
      {mase::formats::e4m3, 0x7e, 448},         {mase::formats::e4m3, 0x7f, nan},
      {mase::formats::e4m3, 0xff, nan},         {mase::formats::e4m3, 0x01, std::ldexp(1.0L, -9)},
      {mase::formats::e4m3, 0x08, std::ldexp(1.0L, -6)}, {mase::formats::e4m3, 0x38, 1},
      {mase::formats::e4m3, 0x78, 256},         {mase::formats::e4m3, 0x80, -0.0L},
      {mase::formats::e5m2, 0x7b, 57344},       {mase::formats::e5m2, 0x7c, inf},
      {mase::formats::e5m2, 0xfc, -inf},        {mase::formats::e5m2, 0x7d, nan},
      {mase::formats::e5m2, 0x7f, nan},         {mase::formats::e5m2, 0x01, std::ldexp(1.0L, -16)},
      {mase::formats::e5m2, 0x3c, 1},           {mase::formats::e3m2, 0x1f, 28},
      {mase::formats::e3m2, 0x01, 0.0625L},     {mase::formats::e3m2, 0x3f, -28},
      {mase::formats::e2m3, 0x1f, 7.5L},        {mase::formats::e2m3, 0x01, 0.125L},
      {mase::formats::e2m3, 0x08, 1},           {mase::formats::e2m1, 0x7, 6},
      {mase::formats::e2m1, 0x1, 0.5L},         {mase::formats::e2m1, 0x5, 3},
      {mase::formats::e2m1, 0xf, -6},           {mase::formats::float16, 0x7bff, 65504},
      {mase::formats::float16, 0x3c00, 1},      {mase::formats::float16, 0x0001, std::ldexp(1.0L, -24)},
      {mase::formats::float16, 0x0400, std::ldexp(1.0L, -14)}, {mase::formats::float16, 0x7c00, inf},
      {mase::formats::float16, 0x7e00, nan},    {mase::formats::float16, 0xc000, -2},
      {mase::formats::bfloat16, 0x3f80, 1},     {mase::formats::bfloat16, 0x7f7f, std::ldexp(255.0L, 120)},
      {mase::formats::bfloat16, 0x0001, std::ldexp(1.0L, -133)}, {mase::formats::bfloat16, 0x7f80, inf},
      {mase::formats::bfloat16, 0x7fc0, nan},
  };
  for (const fact& x : facts) {
    INFO(describe(x.f) << " code " << x.code);
    CHECK(mase_test::same_value(mase::decode(x.f, x.code), x.value, true));
    CHECK(mase_test::same_value(mase_test::minifloat_codes(x.f)[x.code].kind == code_kind::nan ? mase_test::ld_nan
                                : mase_test::minifloat_codes(x.f)[x.code].kind == code_kind::pos_inf ? inf
                                : mase_test::minifloat_codes(x.f)[x.code].kind == code_kind::neg_inf ? -inf
                                : mase_test::minifloat_codes(x.f)[x.code].value,
                                x.value, true));
  }
  CHECK(mase::formats::e4m3.max_value() == 448.0);
  CHECK(mase::formats::e5m2.max_value() == 57344.0);
  CHECK(mase::formats::e3m2.max_value() == 28.0);
  CHECK(mase::formats::e2m3.max_value() == 7.5);
  CHECK(mase::formats::e2m1.max_value() == 6.0);
  CHECK(mase::formats::float16.max_value() == 65504.0);
  CHECK(mase::formats::bfloat16.max_value() == static_cast<double>(std::ldexp(255.0L, 120)));
}

TEST_CASE("minifloat: OCP, IEEE and MX element formats under every rounding mode") {
  std::vector<minifloat_fmt> named = {mase::formats::e4m3, mase::formats::e5m2, mase::formats::e3m2,
                                      mase::formats::e2m3, mase::formats::e2m1};
  minifloat_fmt e4m3_sat = mase::formats::e4m3;
  e4m3_sat.saturating = true;
  minifloat_fmt e5m2_sat = mase::formats::e5m2;
  e5m2_sat.saturating = true;
  named.push_back(e4m3_sat);
  named.push_back(e5m2_sat);
  named.push_back(mase::formats::float16);
  named.push_back(mase::formats::bfloat16);
  mase_test::mismatch_log log;
  for (minifloat_fmt f : named)
    for (rounding r : roundings_for(f.bits())) {
      if (f.bits() == 16 && MASE_EXHAUSTIVE_LEVEL < 1 && r != rounding::half_even) continue;
      f.round = r;
      check_format(f, log);
    }
  INFO(log.checked << " checks; first mismatches:\n" << log.first);
  CHECK(log.failed == 0);
}

TEST_CASE("minifloat: every valid minifloat<W,E,B> up to 8 bits, all options and modes") {
  const int top_width = MASE_EXHAUSTIVE_LEVEL >= 1 ? 8 : 6;
  for (int width = 3; width <= top_width; ++width) {
    mase_test::mismatch_log log;
    std::size_t formats = 0;
    for (int e = 1; e <= width - 1 && e <= 8; ++e) {
      const int m = width - 1 - e;
      for (int bias : {(1 << (e - 1)) - 1, 0, (1 << e) + 1, -2})
        for (special_values sv : {special_values::finite, special_values::ieee, special_values::nan_only})
          for (bool saturating : {true, false})
            for (bool subnormals : {true, false})
              for (rounding r : roundings_for(width)) {
                const minifloat_fmt f{.exp_bits = e, .man_bits = m, .bias = bias, .subnormals = subnormals,
                                      .specials = sv, .saturating = saturating, .round = r};
                if (!valid(f)) continue;
                check_format(f, log);
                ++formats;
              }
    }
    INFO("width " << width << ": " << formats << " formats, " << log.checked << " checks; first mismatches:\n"
                  << log.first);
    CHECK(formats > 0);
    CHECK(log.failed == 0);
  }
}

TEST_CASE("minifloat: a spread of minifloat<W,E,B> from 9 to 16 bits") {
  mase_test::mismatch_log log;
  std::size_t formats = 0;
  std::size_t k = 0;
  const int step = MASE_EXHAUSTIVE_LEVEL >= 1 ? 1 : 3;
  for (int width = 9; width <= 16; width += step)
    for (int e = 1; e <= 8 && e <= width - 1; ++e) {
      const int m = width - 1 - e;
      // rotate the options so that every one meets every width
      ++k;
      const special_values sv = k % 3 == 0 ? special_values::finite : k % 3 == 1 ? special_values::ieee : special_values::nan_only;
      const bool saturating = sv == special_values::finite || (k / 3) % 2 == 0;
      const bool subnormals = (k / 2) % 2 == 0;
      const rounding r = mase::all_roundings[k % 8];
      int bias = (1 << (e - 1)) - 1;
      if (k % 4 == 1) bias += 3;
      if (k % 4 == 2) bias = e >= 7 ? 127 : 1;
      minifloat_fmt f{.exp_bits = e, .man_bits = m, .bias = bias, .subnormals = subnormals, .specials = sv,
                      .saturating = saturating, .round = r};
      if (!valid(f)) {
        f.bias = (1 << (e - 1)) - 1;
        if (!valid(f)) continue;
      }
      check_format(f, log);
      ++formats;
    }
  INFO(formats << " formats, " << log.checked << " checks; first mismatches:\n" << log.first);
  CHECK(formats >= (MASE_EXHAUSTIVE_LEVEL >= 1 ? 40u : 10u));
  CHECK(log.failed == 0);
}

namespace {

template <minifloat_fmt F>
void check_compile_time_agrees(const std::vector<float>& in) {
  std::vector<float> runtime(in.size()), compile_time(in.size());
  mase::quantize(F, in, runtime);
  mase::quantize<F>(in, compile_time);
  std::size_t mismatches = 0;
  for (std::size_t i = 0; i < in.size(); ++i)
    if (!mase_test::same_value(runtime[i], compile_time[i], true)) ++mismatches;
  INFO(describe(F));
  CHECK(mismatches == 0);
}

}  // namespace

TEST_CASE("minifloat: the compile-time quantizer agrees with the runtime one") {
  const mase_test::grid g = mase_test::minifloat_grid(mase::formats::float16);
  const std::vector<float> in = mase_test::probe_inputs(g, 3000, 3000, 17);
  check_compile_time_agrees<mase::formats::e4m3>(in);
  check_compile_time_agrees<mase::formats::e5m2>(in);
  check_compile_time_agrees<mase::formats::e2m1>(in);
  check_compile_time_agrees<mase::formats::float16>(in);
  check_compile_time_agrees<mase::formats::bfloat16>(in);
  check_compile_time_agrees<minifloat_fmt{.exp_bits = 3, .man_bits = 4, .bias = 2, .subnormals = false,
                                          .round = rounding::floor}>(in);
}
