// Exhaustive tests of the fixed-point quantizer, encoder and decoder over a grid of formats up
// to 16 bits: widths 1..16, fractions negative, zero, inside and beyond the width, signed and
// unsigned, every rounding and overflow mode. For each format:
//   (a) every code decodes to raw * 2^-frac and encodes back to itself;
//   (b) quantize is idempotent on every decoded value (the most negative code of a symmetric
//       format is the one value it must move, to -max);
//   (c) sorted inputs give sorted outputs (saturating modes; wrap is periodic by definition);
//   (d) every probe input (values, midpoints, midpoints ± 1 float ulp, values beyond the range,
//       float extremes, random floats) gives mase_test::fixed_reference's exact value, through
//       quantize and through decode(encode(x)).
// MASE_EXHAUSTIVE_LEVEL=0 runs a sample of widths and fractions.
#include <mase/quant/fixed.hpp>

#include "../format/format_reference.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

using mase::fixed_fmt;
using mase::overflow;
using mase::rounding;
using mase_test::ld;

namespace {

std::string describe(const fixed_fmt& f) {
  return std::string(f.is_signed ? "fixed<" : "ufixed<") + std::to_string(f.width) + "," + std::to_string(f.frac) +
         "," + std::string(mase::to_string(f.round)) + "," + std::string(mase::to_string(f.ovf)) + ">";
}

std::vector<int> widths_under_test() {
  if (MASE_EXHAUSTIVE_LEVEL >= 1) {
    std::vector<int> w;
    for (int i = 1; i <= 16; ++i) w.push_back(i);
    return w;
  }
  return {1, 2, 3, 5, 8, 12, 16};
}

std::vector<int> fracs_for(int width) {
  std::vector<int> fracs = {-3, 0, width, width + 5};
  if (MASE_EXHAUSTIVE_LEVEL >= 1) fracs.push_back(width / 2);
  std::sort(fracs.begin(), fracs.end());
  fracs.erase(std::unique(fracs.begin(), fracs.end()), fracs.end());
  return fracs;
}

// The raw integer a width-bit code stands for.
std::int64_t raw_of_code(const fixed_fmt& f, std::uint64_t code) {
  if (f.is_signed && (code >> (f.width - 1)) != 0) return static_cast<std::int64_t>(code) - (std::int64_t{1} << f.width);
  return static_cast<std::int64_t>(code);
}

void check_format(const fixed_fmt& f, mase_test::mismatch_log& log) {
  const std::string name = describe(f);
  const std::uint64_t codes = std::uint64_t{1} << f.width;
  const bool symmetric = f.ovf == overflow::saturate_symmetric && f.is_signed;
  const ld max = mase_test::fixed_hi(f) * mase_test::pow2(-f.frac);

  // (a) codes round-trip, (b) idempotence
  std::vector<float> decoded(codes);
  for (std::uint64_t c = 0; c < codes; ++c) {
    const float v = mase::decode(f, c);
    decoded[c] = v;
    const ld expected = static_cast<ld>(raw_of_code(f, c)) * mase_test::pow2(-f.frac);
    log.check_lazy(static_cast<ld>(v) == expected, [&] {
      return name + ": decode(" + std::to_string(c) + ") = " + mase_test::show(v) + ", expected " +
             mase_test::show(expected);
    });
    // a symmetric format never produces its most negative code: it encodes as -max
    const bool most_negative = symmetric && raw_of_code(f, c) == -(std::int64_t{1} << (f.width - 1));
    const std::uint64_t minus_max_code =
        static_cast<std::uint64_t>(-static_cast<std::int64_t>(mase_test::fixed_hi(f))) & (codes - 1);
    const std::uint64_t back = mase::encode(f, v);
    log.check_lazy(back == (most_negative ? minus_max_code : c), [&] {
      return name + ": encode(decode(" + std::to_string(c) + ")) = " + std::to_string(back);
    });
  }
  std::vector<float> requantized(codes);
  mase::quantize(f, decoded, requantized);
  for (std::uint64_t c = 0; c < codes; ++c) {
    const bool most_negative = symmetric && raw_of_code(f, c) == -(std::int64_t{1} << (f.width - 1));
    const ld expected = most_negative ? -max : static_cast<ld>(decoded[c]);
    log.check_lazy(static_cast<ld>(requantized[c]) == expected, [&] {
      return name + ": quantize(" + mase_test::show(decoded[c]) + ") = " + mase_test::show(requantized[c]) +
             " is not idempotent";
    });
  }

  // (c), (d)
  const mase_test::grid g = mase_test::fixed_grid(f);
  const std::size_t max_midpoints = MASE_EXHAUSTIVE_LEVEL >= 1 ? (f.width <= 12 ? 8192 : 3000) : 600;
  const std::vector<float> in =
      mase_test::probe_inputs(g, max_midpoints, 400, 0x5eed0000u + static_cast<std::uint64_t>(f.width * 131 + f.frac));
  std::vector<float> out(in.size());
  mase::quantize(f, in, out);
  for (std::size_t i = 0; i < in.size(); ++i) {
    const ld expected = mase_test::fixed_reference(f, in[i]);
    log.check_lazy(static_cast<ld>(out[i]) == expected, [&] {
      return name + ": quantize(" + mase_test::show(in[i]) + ") = " + mase_test::show(out[i]) + ", expected " +
             mase_test::show(expected);
    });
    const float via_code = mase::decode(f, mase::encode(f, in[i]));
    log.check_lazy(static_cast<ld>(via_code) == expected, [&] {
      return name + ": decode(encode(" + mase_test::show(in[i]) + ")) = " + mase_test::show(via_code) +
             ", expected " + mase_test::show(expected);
    });
    if (f.ovf != overflow::wrap && i > 0) {
      log.check_lazy(out[i - 1] <= out[i], [&] {
        return name + ": not monotone: quantize(" + mase_test::show(in[i - 1]) + ") = " + mase_test::show(out[i - 1]) +
               " > quantize(" + mase_test::show(in[i]) + ") = " + mase_test::show(out[i]);
      });
    }
  }
}

}  // namespace

TEST_CASE("fixed point: codes, idempotence, monotonicity and exact rounding for every mode up to 16 bits") {
  for (int width : widths_under_test()) {
    mase_test::mismatch_log log;
    std::size_t formats = 0;
    for (int frac : fracs_for(width))
      for (bool is_signed : {true, false})
        for (rounding r : mase::all_roundings)
          for (overflow o : mase::all_overflows) {
            check_format(fixed_fmt{.width = width, .frac = frac, .is_signed = is_signed, .round = r, .ovf = o}, log);
            ++formats;
          }
    INFO("width " << width << ": " << formats << " formats, " << log.checked << " checks; first mismatches:\n"
                  << log.first);
    CHECK(log.checked > formats * (std::size_t{1} << width));
    CHECK(log.failed == 0);
  }
}

namespace {

template <fixed_fmt F>
void check_compile_time_agrees(const std::vector<float>& in) {
  std::vector<float> runtime(in.size()), compile_time(in.size());
  mase::quantize(F, in, runtime);
  mase::quantize<F>(in, compile_time);
  std::size_t mismatches = 0;
  for (std::size_t i = 0; i < in.size(); ++i)
    if (!mase_test::same_value(runtime[i], compile_time[i], false)) ++mismatches;
  INFO(describe(F));
  CHECK(mismatches == 0);
}

}  // namespace

TEST_CASE("fixed point: the compile-time quantizer agrees with the runtime one") {
  const mase_test::grid g = mase_test::fixed_grid(fixed_fmt{.width = 8, .frac = 3});
  const std::vector<float> in = mase_test::probe_inputs(g, 1000, 500, 99);
  check_compile_time_agrees<fixed_fmt{.width = 8, .frac = 3}>(in);
  check_compile_time_agrees<fixed_fmt{.width = 8, .frac = 3, .is_signed = false, .round = rounding::floor}>(in);
  check_compile_time_agrees<fixed_fmt{.width = 6, .frac = -2, .round = rounding::half_away, .ovf = overflow::wrap}>(in);
  check_compile_time_agrees<fixed_fmt{
      .width = 16, .frac = 20, .round = rounding::half_up, .ovf = overflow::saturate_symmetric}>(in);
}
