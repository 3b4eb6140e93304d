#pragma once
// The integer definitions of the transformer's non-linear ops: softmax over a row, and layer and
// RMS normalization over a row. Each is written once here, on integer codes, with every rounding
// stated; the bit-exact evaluator runs these functions and a hardware component implements the
// same steps, so a simulation can be checked word for word.
//
// Softmax of a row of codes x (input format F_x fraction bits) into a format of F_o fraction bits:
//   m   = max x                                   (exact)
//   e_i = E(m − x_i)                              a table: E(k) = round(exp(−k·2^−F_x) · 2^F_e),
//                                                 F_e = F_o + ⌈log2(N + 1)⌉ for a row of N
//   s   = Σ e_i                                   (exact; s ≥ 2^F_e, the maximum's own term)
//   y_i = min(⌊e_i · 2^F_o / s⌋, the format's largest code)
// The table's rounding moves each e_i by at most 1/2 and s by at most N/2, which F_e keeps under
// half an output step; the floor adds under one: |y − softmax(x)| < 1.5 · 2^−F_o.
//
// Layer normalization of a row of N codes x (F_x), optionally times weight codes w (F_w) plus
// bias codes b (F_b), into a format of F_o fraction bits; RMS normalization is the same without
// the centring (S1 taken as 0):
//   S1 = Σ x, S2 = Σ x²                           (exact)
//   V  = N·S2 − S1² + E                           E = round(eps · N² · 2^(2·F_x)): N²·2^(2F_x)·(var + eps)
//   R  = ⌊2^P / √V⌋                               the largest R with R²·V ≤ 2^(2P) (0 when V = 0),
//                                                 the integer square root of ⌊2^(2P) / V⌋
//   c_i = N·x_i − S1                              N·2^F_x·(x_i − mean), exact
//   t_i = c_i · R · w_i + (b_i aligned to P + F_w fraction bits, floor)   (w_i = 1, F_w = 0 without weight)
//   y_i = hardware_cast_raw(t_i, P + F_w, out)    (floor, saturate)
// with P = F_o + W_x + ⌈log2 N⌉ + 2: R's floor moves c·R / 2^P by at most |c| / 2^P < 2^−(F_o+2)
// (|c| < N·2^W_x), so |y − exact| < 2^−F_o · (1 + |w| / 4).

#include <mase/core/error.hpp>
#include <mase/eval/fixed_rules.hpp>
#include <mase/format/fixed.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <vector>

namespace mase::eval {

__extension__ using int128 = __int128;  // the inverse square root's squares (GCC and Clang)

constexpr int ceil_log2(std::int64_t n) noexcept {
  return n <= 1 ? 0 : std::bit_width(static_cast<std::uint64_t>(n - 1));
}

// ---------------------------------------------------------------------------------------------
// Softmax.

// The exp table of a softmax over rows of `row_length`: entry k is E(k) for a distance k = m − x
// from the row's maximum; beyond the table every entry rounds to 0.
struct softmax_rule {
  std::int64_t row_length = 0;
  int input_frac = 0, exp_frac = 0;
  fixed_fmt output{};
  std::vector<std::int64_t> exp_table{};  // E(0) = 2^exp_frac, decreasing, all positive

  std::int64_t exp_of(std::int64_t distance) const noexcept {
    return distance < static_cast<std::int64_t>(exp_table.size()) ? exp_table[static_cast<std::size_t>(distance)] : 0;
  }

  // One row of codes into output codes.
  void run(std::span<const std::int64_t> x, std::span<std::int64_t> y) const {
    const std::int64_t m = *std::max_element(x.begin(), x.end());
    std::int64_t sum = 0;
    for (std::size_t i = 0; i < x.size(); ++i) sum += (y[i] = exp_of(m - x[i]));
    const std::int64_t top = output.saturation_range().hi;
    for (std::size_t i = 0; i < x.size(); ++i) y[i] = std::min(top, (y[i] << output.frac) / sum);
  }
};

inline softmax_rule make_softmax_rule(const fixed_fmt& input, const fixed_fmt& output, std::int64_t row_length) {
  softmax_rule r{.row_length = row_length,
                 .input_frac = input.frac, .exp_frac = output.frac + ceil_log2(row_length + 1), .output = output};
  require(r.exp_frac + output.frac + ceil_log2(row_length) + 2 <= 62,
          "softmax: {} output fraction bits over rows of {} need more than 64-bit integers; use a narrower output",
          output.frac, row_length);
  const std::int64_t distances = std::int64_t{1} << std::min(input.width, 24);  // every m − x of the format
  for (std::int64_t k = 0; k < distances; ++k) {
    const std::int64_t e = std::llround(std::ldexp(std::exp(-std::ldexp(static_cast<double>(k), -input.frac)), r.exp_frac));
    if (e == 0) break;
    r.exp_table.push_back(e);
  }
  return r;
}

// ---------------------------------------------------------------------------------------------
// Layer and RMS normalization.

// ⌊2^p / √v⌋ for v > 0 and p ≤ 62: the largest r with r²·v ≤ 2^(2p). (It equals the integer
// square root of ⌊2^(2p) / v⌋, which a hardware divider and square root find bit by bit.) Here a
// floating-point estimate is corrected by exact comparisons until r²·v ≤ 2^(2p) < (r+1)²·v, so
// the estimate's rounding cannot change the result.
inline std::int64_t inverse_sqrt_floor(std::int64_t v, int p) {
  if (v <= 0) return 0;
  __extension__ using uint128 = unsigned __int128;
  const uint128 limit = uint128{1} << (2 * p);
  // r ≤ 2^p + 1 and r·√v stays near 2^p, so r²·v stays far below 2^128.
  const auto within = [&](std::int64_t r) { return uint128(r) * uint128(r) * uint128(v) <= limit; };
  const long double top = std::ldexp(1.0L, p);
  const long double estimate = std::floor(top / std::sqrt(static_cast<long double>(v)));
  std::int64_t r = static_cast<std::int64_t>(std::min(estimate, top));
  while (r > 0 && !within(r)) --r;
  while (within(r + 1)) ++r;
  return r;
}

// P: the reciprocal's fraction bits for rows of `row_length` (the header's bound).
constexpr int normalization_reciprocal_bits(const fixed_fmt& input, const fixed_fmt& output, std::int64_t row_length) {
  return output.frac + input.width + ceil_log2(row_length) + 2;
}

struct normalization_rule {
  bool centred = true;  // layer norm; false: RMS norm
  std::int64_t row_length = 0;
  fixed_fmt input{};
  std::optional<fixed_fmt> weight{}, bias{};
  fixed_fmt output{};
  int reciprocal_bits = 0;     // P
  std::int64_t epsilon = 0;    // E
  std::vector<std::int64_t> weight_codes{};  // per position of the row (empty: no weight)
  std::vector<std::int64_t> aligned_bias{};  // at P + F_w fraction bits (empty: no bias)

  int product_frac() const noexcept { return reciprocal_bits + (weight ? weight->frac : 0); }

  // One row of row_length codes into output codes; false (y unwritten) when the row's variance
  // overflows 64 bits. No error path, so that the dispatcher can compile it into its copies.
  bool run_row(const std::int64_t* x, std::int64_t* y) const noexcept {
    const std::int64_t n = row_length;
    std::int64_t s1 = 0;
    int128 s2 = 0;
    if (2 * (input.width - 1) + ceil_log2(n) <= 62) {
      // Every x² < 2^(2W−2), so the row's squares sum in 64 bits, which vectorise.
      std::int64_t squares = 0;
      for (std::int64_t i = 0; i < n; ++i) s1 += x[i], squares += x[i] * x[i];
      s2 = squares;
    } else {
      for (std::int64_t i = 0; i < n; ++i) s1 += x[i], s2 += int128{x[i]} * x[i];
    }
    if (!centred) s1 = 0;
    const int128 variance = int128{n} * s2 - int128{s1} * s1 + epsilon;
    if (variance > std::numeric_limits<std::int64_t>::max()) return false;
    const std::int64_t r = inverse_sqrt_floor(static_cast<std::int64_t>(variance), reciprocal_bits);
    const std::int64_t* w = weight_codes.empty() ? nullptr : weight_codes.data();
    const std::int64_t* b = aligned_bias.empty() ? nullptr : aligned_bias.data();
    const int shift = product_frac() - output.frac;
    if (shift <= 0 || shift >= 63) {
      for (std::int64_t i = 0; i < n; ++i) {
        std::int64_t t = (n * x[i] - s1) * r;
        if (w != nullptr) t *= w[i];
        if (b != nullptr) t += b[i];
        y[i] = hardware_cast_raw(t, product_frac(), output);
      }
      return true;
    }
    // hardware_cast_raw's floor and saturation for a right shift, with the weight and bias tests
    // taken out of the loops.
    const integer_range range = output.saturation_range();
    const auto cast = [&](std::int64_t t) {
      const std::int64_t v = t >> shift;  // arithmetic: floor
      return v < range.lo ? range.lo : (v > range.hi ? range.hi : v);
    };
    if (w != nullptr && b != nullptr)
      for (std::int64_t i = 0; i < n; ++i) y[i] = cast((n * x[i] - s1) * r * w[i] + b[i]);
    else if (w != nullptr)
      for (std::int64_t i = 0; i < n; ++i) y[i] = cast((n * x[i] - s1) * r * w[i]);
    else if (b != nullptr)
      for (std::int64_t i = 0; i < n; ++i) y[i] = cast((n * x[i] - s1) * r + b[i]);
    else
      for (std::int64_t i = 0; i < n; ++i) y[i] = cast((n * x[i] - s1) * r);
    return true;
  }

  void run(std::span<const std::int64_t> x, std::span<std::int64_t> y) const {
    require(static_cast<std::int64_t>(x.size()) == row_length && y.size() == x.size(),
            "normalization: a row of {} codes for a rule over rows of {}", x.size(), row_length);
    require(run_row(x.data(), y.data()), "normalization: the row's variance overflows 64 bits");
  }
};

// The rule for rows of `row_length`; the weight and bias codes are given per position of the row.
inline normalization_rule make_normalization_rule(bool centred, std::int64_t row_length, double eps,
                                                  const fixed_fmt& input, const fixed_fmt& output,
                                                  std::optional<fixed_fmt> weight, std::vector<std::int64_t> weight_codes,
                                                  std::optional<fixed_fmt> bias, std::span<const std::int64_t> bias_codes) {
  normalization_rule r{.centred = centred,
                       .row_length = row_length,
                       .input = input,
                       .weight = weight,
                       .bias = bias,
                       .output = output,
                       .reciprocal_bits = normalization_reciprocal_bits(input, output, row_length),
                       .epsilon = std::llround(eps * static_cast<double>(row_length) * static_cast<double>(row_length) *
                                               std::ldexp(1.0, 2 * input.frac)),
                       .weight_codes = std::move(weight_codes),
                       .aligned_bias = {}};
  // |c·R| ≤ √N · 2^P (c/√V is a normalized deviation), then the weight's bits and the bias's one.
  const int product_bits =
      r.reciprocal_bits + (ceil_log2(row_length) + 1) / 2 + 1 + (weight ? weight->width : 0) + (bias ? 1 : 0) + 1;
  require(product_bits <= 63 && r.reciprocal_bits <= 62,
          "normalization: {}-bit inputs over rows of {} into {} fraction bits need more than 64-bit integers; use "
          "narrower formats",
          input.width, row_length, output.frac);
  if (bias)
    for (std::int64_t b : bias_codes) r.aligned_bias.push_back(bias_to_accumulator_raw(b, bias->frac, r.product_frac()));
  return r;
}

}  // namespace mase::eval
