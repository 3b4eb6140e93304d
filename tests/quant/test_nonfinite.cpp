// Non-finite and extreme inputs for every family: NaN, ±inf, -0.0, float32 subnormals
// (1e-45f, -1e-40f), ±FLT_MAX. Expected behaviour is what each header's top comment documents:
//   fixed      NaN stays NaN (encodes as 0); ±inf saturate in every overflow mode, wrap included;
//   minifloat  NaN stays NaN (encode: the NaN code, or mase::error without one); ±inf give ±inf
//              where the format has it, ±max when it saturates, else NaN; zeros keep their sign;
//   log        NaN stays NaN (encode throws); ±inf saturate to ±2^emax;
//   binary / ternary / residual_sign  NaN stays NaN (encode throws);
//   blocks     NaN elements stay NaN, ±inf saturate to the block's largest magnitude and neither
//              takes part in choosing the shared exponent; an all-zero block stays zero.
// Finite values (subnormals, FLT_MAX) are checked against the test-side references.
#include <mase/quant/quantize.hpp>

#include "../format/block_reference.hpp"

#include <catch2/catch.hpp>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

using namespace mase;
using mase_test::ld;

namespace {

constexpr float f_inf = std::numeric_limits<float>::infinity();
constexpr float f_nan = std::numeric_limits<float>::quiet_NaN();

// The inputs of every test: NaN, +inf, -inf, -0.0, +0.0, two float32 subnormals, ±FLT_MAX.
const std::vector<float> specials = {f_nan, f_inf, -f_inf, -0.0f, 0.0f, 1e-45f, -1e-40f, FLT_MAX, -FLT_MAX};
enum : std::size_t { i_nan, i_inf, i_ninf, i_nzero, i_zero, i_tiny, i_ntiny, i_max, i_nmax };

std::vector<float> run(const format& f, const std::vector<float>& in) {
  std::vector<float> out(in.size());
  quantize(f, in, out);
  return out;
}

std::string show(float v) { return mase_test::show(v); }

}  // namespace

TEST_CASE("fixed point: NaN stays NaN, infinities saturate in every overflow mode") {
  for (bool is_signed : {true, false})
    for (overflow o : all_overflows)
      for (rounding r : {rounding::half_even, rounding::floor, rounding::ceil, rounding::half_up}) {
        const fixed_fmt f{.width = 8, .frac = 4, .is_signed = is_signed, .round = r, .ovf = o};
        INFO(to_string(f));
        const std::vector<float> y = run(f, specials);
        const ld hi = mase_test::fixed_hi(f) / 16.0L;
        const ld lo = (o == overflow::saturate_symmetric && is_signed) ? -hi : mase_test::fixed_lo(f) / 16.0L;
        CHECK(std::isnan(y[i_nan]));
        CHECK(y[i_inf] == hi);
        CHECK(y[i_ninf] == lo);
        CHECK(y[i_nzero] == 0.0f);
        CHECK(y[i_zero] == 0.0f);
        for (std::size_t i : {i_tiny, i_ntiny, i_max, i_nmax}) {
          INFO("x = " << show(specials[i]) << " -> " << show(y[i]));
          CHECK(y[i] == mase_test::fixed_reference(f, specials[i]));
        }
        // codes: NaN encodes as 0, infinities as the bounds
        CHECK(encode(f, f_nan) == 0);
        CHECK(decode(f, encode(f, f_inf)) == hi);
        CHECK(decode(f, encode(f, -f_inf)) == lo);
        CHECK(decode(f, encode(f, 1e-45f)) == mase_test::fixed_reference(f, 1e-45f));
        CHECK(decode(f, encode(f, FLT_MAX)) == mase_test::fixed_reference(f, FLT_MAX));
      }
}

TEST_CASE("minifloat: NaN, infinities, signed zeros, subnormal inputs and FLT_MAX") {
  minifloat_fmt e4m3_sat = formats::e4m3;
  e4m3_sat.saturating = true;
  minifloat_fmt e5m2_sat = formats::e5m2;
  e5m2_sat.saturating = true;
  const minifloat_fmt no_subnormals{.exp_bits = 4, .man_bits = 3, .bias = 7, .subnormals = false};
  for (minifloat_fmt f : {formats::e4m3, formats::e5m2, formats::e3m2, formats::e2m3, formats::e2m1, formats::float16,
                          formats::bfloat16, e4m3_sat, e5m2_sat, no_subnormals})
    for (rounding r : {rounding::half_even, rounding::floor, rounding::ceil, rounding::toward_zero}) {
      f.round = r;
      INFO(to_string(f));
      const std::vector<float> y = run(f, specials);
      const auto max = static_cast<float>(f.max_value());
      CHECK(std::isnan(y[i_nan]));
      if (f.saturating) {
        CHECK(y[i_inf] == max);
        CHECK(y[i_ninf] == -max);
      } else if (f.has_inf()) {
        CHECK(y[i_inf] == f_inf);
        CHECK(y[i_ninf] == -f_inf);
      } else {
        CHECK(std::isnan(y[i_inf]));
        CHECK(std::isnan(y[i_ninf]));
      }
      CHECK((y[i_nzero] == 0.0f && std::signbit(y[i_nzero])));
      CHECK((y[i_zero] == 0.0f && !std::signbit(y[i_zero])));
      const mase_test::grid g = mase_test::minifloat_grid(f);
      for (std::size_t i : {i_tiny, i_ntiny, i_max, i_nmax}) {
        const ld expected = mase_test::minifloat_reference(f, g, specials[i]);
        INFO("x = " << show(specials[i]) << " -> " << show(y[i]) << ", expected " << mase_test::show(expected));
        CHECK(mase_test::same_value(y[i], expected, true));
      }
      // codes
      const int sign_shift = f.exp_bits + f.man_bits;
      CHECK(encode(f, -0.0f) == std::uint64_t{1} << sign_shift);
      CHECK(encode(f, 0.0f) == 0);
      if (f.specials == special_values::ieee) {
        CHECK(std::isnan(decode(f, encode(f, f_nan))));
      } else if (f.specials == special_values::nan_only) {
        const std::uint64_t all_ones = (std::uint64_t{1} << sign_shift) - 1;  // S.1111.111
        CHECK(encode(f, f_nan) == all_ones);
        CHECK(encode(f, -f_nan) == (all_ones | std::uint64_t{1} << sign_shift));
      } else {
        CHECK_THROWS_AS(encode(f, f_nan), error);
      }
    }
}

TEST_CASE("log: NaN stays NaN, infinities saturate to 2^emax, subnormal inputs flush") {
  for (const log_fmt& f : {log_fmt{.width = 8, .bias = 63}, log_fmt{.width = 4, .bias = 3},
                           log_fmt{.width = 5, .bias = -3}, log_fmt{.width = 8, .bias = 127}}) {
    INFO(to_string(f));
    std::vector<float> in = specials;
    in.push_back(0x1p-127f);   // a subnormal half a binade below 2^-126.5
    in.push_back(-0x1.8p-127f);
    const std::vector<float> y = run(f, in);
    const float top = std::ldexp(1.0f, f.emax());
    CHECK(std::isnan(y[i_nan]));
    CHECK(y[i_inf] == top);
    CHECK(y[i_ninf] == -top);
    CHECK((y[i_nzero] == 0.0f && std::signbit(y[i_nzero])));
    CHECK((y[i_zero] == 0.0f && !std::signbit(y[i_zero])));
    CHECK(y[i_max] == top);
    CHECK(y[i_nmax] == -top);
    const std::vector<ld> magnitudes = mase_test::log_magnitudes(f);
    for (std::size_t i : {std::size_t{i_tiny}, std::size_t{i_ntiny}, in.size() - 2, in.size() - 1}) {
      const ld expected = mase_test::log_reference(f, magnitudes, in[i]);
      INFO("x = " << show(in[i]) << " -> " << show(y[i]) << ", expected " << mase_test::show(expected));
      CHECK(mase_test::same_value(y[i], expected, true));
    }
    CHECK_THROWS_AS(encode(f, f_nan), error);
    CHECK(decode(f, encode(f, -f_inf)) == -top);
  }
}

TEST_CASE("binary, ternary, residual_sign: NaN stays NaN, the rest follows the sign rules") {
  const std::vector<float> b = run(binary_fmt{}, specials);
  CHECK(std::isnan(b[i_nan]));
  CHECK(b[i_inf] == 1.0f);
  CHECK(b[i_ninf] == -1.0f);
  CHECK(b[i_nzero] == 1.0f);  // zero and -0.0 map to +1
  CHECK(b[i_zero] == 1.0f);
  CHECK(b[i_tiny] == 1.0f);
  CHECK(b[i_ntiny] == -1.0f);
  CHECK(b[i_max] == 1.0f);
  CHECK(b[i_nmax] == -1.0f);
  CHECK_THROWS_AS(encode(binary_fmt{}, f_nan), error);

  const std::vector<float> t = run(ternary_fmt{.threshold = 0.5}, specials);
  CHECK(std::isnan(t[i_nan]));
  CHECK(t[i_inf] == 1.0f);
  CHECK(t[i_ninf] == -1.0f);
  CHECK(t[i_nzero] == 0.0f);
  CHECK(t[i_tiny] == 0.0f);
  CHECK(t[i_ntiny] == 0.0f);
  CHECK(t[i_max] == 1.0f);
  CHECK(t[i_nmax] == -1.0f);
  const std::vector<float> t0 = run(ternary_fmt{.threshold = 0.0}, specials);
  CHECK(t0[i_nzero] == 0.0f);
  CHECK(t0[i_tiny] == 1.0f);
  CHECK(t0[i_ntiny] == -1.0f);
  CHECK_THROWS_AS(encode(ternary_fmt{}, f_nan), error);

  const residual_sign_fmt rs{.levels = 2, .means = {0.5, 0.25, 0, 0}};
  const std::vector<float> r = run(rs, specials);
  CHECK(std::isnan(r[i_nan]));
  CHECK(r[i_inf] == 0.75f);    // every residual stays +inf: all signs +1
  CHECK(r[i_ninf] == -0.75f);
  CHECK(r[i_max] == 0.75f);
  CHECK(r[i_zero] == 0.25f);   // residual 0 >= 0 gives +1, then -0.5 gives -1
  CHECK_THROWS_AS(encode(rs, f_nan), error);
}

namespace {

// Every block format, in variants blocked along one dim of 8 (so one tensor holds two blocks).
std::vector<format> block_formats() {
  std::vector<format> f = {
      block_fp_fmt{.width = 8, .exp_bits = 8, .bias = 127, .block = {.rows = block_shape::full, .cols = 8, .skip_first_dim = false}},
      block_fp_fmt{.width = 4, .exp_bits = 4, .bias = 7, .block = {.rows = block_shape::full, .cols = 8, .skip_first_dim = false},
                   .round = rounding::floor},
      block_minifloat_fmt{.width = 8, .exp_bits = 4, .bias_bits = 8, .block = {.rows = block_shape::full, .cols = 8, .skip_first_dim = false}},
      block_log_fmt{.width = 6, .bias_bits = 8, .block = {.rows = block_shape::full, .cols = 8, .skip_first_dim = false}},
      mxint_fmt{.width = 8, .exp_bits = 8, .block = {.rows = 1, .cols = 8, .skip_first_dim = false}},
      mxint_fmt{.width = 4, .exp_bits = 3, .block = {.rows = 1, .cols = 8, .skip_first_dim = false}},
  };
  for (mx_element e : all_mx_elements) f.push_back(mx_fmt{.element = e, .block_size = 8});
  return f;
}

mase_test::tensor_result block_reference(const format& f, const std::vector<float>& in, const std::vector<std::int64_t>& shape,
                                         mase_test::minifloat_grids& grids) {
  return f.visit([&](const auto& d) -> mase_test::tensor_result {
    if constexpr (block_descriptor<std::remove_cvref_t<decltype(d)>>) {
      return mase_test::reference(d, in, shape, grids);
    } else {
      FAIL("not a block format");
      return {};
    }
  });
}

}  // namespace

TEST_CASE("block formats: NaN stays NaN, infinities saturate to the block's largest magnitude") {
  const std::vector<std::int64_t> shape{16};
  // block 0: finite values with NaN and ±inf among them; block 1: the same finite values alone
  const std::vector<float> finite = {0.75f, -1.5f, 3.0f, 0.1f, -0.0f, 2.5f, -0.3f, 1.0f};
  std::vector<float> in(16);
  for (std::size_t k = 0; k < 8; ++k) in[8 + k] = finite[k];
  in = {0.75f, -1.5f, f_nan, 3.0f, f_inf, -f_inf, 0.1f, -0.0f, 0.75f, -1.5f, 0.0f, 3.0f, 0.0f, 0.0f, 0.1f, -0.0f};
  mase_test::minifloat_grids grids;
  for (const format& f : block_formats()) {
    INFO(to_string(f));
    const std::vector<float> y = run(f, in);
    const mase_test::tensor_result ref = block_reference(f, in, shape, grids);
    CHECK(std::isnan(y[2]));
    CHECK(y[4] == ref.bound[4]);
    CHECK(y[5] == -ref.bound[5]);
    CHECK(ref.bound[4] > 0);
    // neither NaN nor ±inf takes part in the shared exponent: the finite values come out as in
    // block 1, where zeros stand in their place
    for (std::size_t k : {0u, 1u, 3u, 6u, 7u}) {
      INFO("element " << k);
      CHECK(y[k] == y[8 + k]);
      CHECK(mase_test::same_value(y[k], ref.y[k], false));
    }
  }
}

TEST_CASE("block formats: all-zero, all-NaN and infinity-only blocks") {
  const std::vector<std::int64_t> shape{16};
  const std::vector<float> in = {0.0f, -0.0f, 0.0f, 0.0f, -0.0f, 0.0f, 0.0f, 0.0f,   // all zero
                                 f_nan,  f_nan,   f_nan,  f_nan,  f_nan,   f_nan,  f_nan,  f_nan};  // all NaN
  const std::vector<float> inf_block = {f_inf, 0.0f, -f_inf, 0.0f, 0.0f, -0.0f, 0.0f, 0.0f,
                                        1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f};
  for (const format& f : block_formats()) {
    INFO(to_string(f));
    const std::vector<float> y = run(f, in);
    for (std::size_t k = 0; k < 8; ++k) CHECK(y[k] == 0.0f);
    for (std::size_t k = 8; k < 16; ++k) CHECK(std::isnan(y[k]));
    // ±inf with no finite non-zero neighbour: the scale is the format's choice, but the result is
    // a finite number of the right sign and the zeros stay zero
    const std::vector<float> z = run(f, inf_block);
    CHECK((std::isfinite(z[0]) && z[0] > 0));
    CHECK((std::isfinite(z[2]) && z[2] < 0));
    CHECK(z[0] == -z[2]);
    for (std::size_t k : {1u, 3u, 4u, 5u, 6u, 7u}) CHECK(z[k] == 0.0f);
  }
}

TEST_CASE("block formats: FLT_MAX and float32 subnormal inputs") {
  const std::vector<std::int64_t> shape{24};
  const std::vector<float> in = {FLT_MAX, 1.0f,    -FLT_MAX / 3, 1e30f,   -0.0f,  1e-45f, 2.0f,     -1e38f,    // FLT_MAX
                                 1e-45f,  -1e-40f, 1e-42f,       -3e-39f, 5e-39f, 0.0f,   1.1e-38f, -1e-44f,   // a normal max
                                 1e-40f,  -3e-39f, 5e-39f,       1e-45f,  -1e-44f, 2e-41f, 0.0f,    4e-39f};  // subnormals only
  mase_test::minifloat_grids grids;
  for (const format& f : block_formats()) {
    INFO(to_string(f));
    const std::vector<float> y = run(f, in);
    const mase_test::tensor_result ref = block_reference(f, in, shape, grids);
    for (std::size_t k = 0; k < in.size(); ++k) {
      INFO("element " << k << ": " << show(in[k]) << " -> " << show(y[k]) << ", expected " << mase_test::show(ref.y[k]));
      CHECK(mase_test::same_value(y[k], ref.y[k], false));
    }
  }
}
