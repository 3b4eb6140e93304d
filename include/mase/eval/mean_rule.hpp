#pragma once
// The integer definition of a mean (global average pooling, torch.mean over spatial dimensions,
// an average pool of any divisor): the exact sum of at most `count` codes with F_x fraction bits,
// divided by the count it averages over (`averaged`: `count` for a mean, the window's divisor for
// a pool) and cast into a format of F_o fraction bits with one floor,
//   S = Σ x                                          (exact)
//   y = saturate(⌊S · 2^(F_o − F_x) / averaged⌋)     (floor towards −∞, then the format's clamp)
// which is hardware_cast_raw of the exact rational mean: |y − mean| < 2^−F_o unless y saturates.
//
// Hardware divides by the constant with one multiply and one shift. With the numerator
// N = S · 2^max(0, F_o − F_x) and the divisor D = averaged · 2^max(0, F_x − F_o),
// ⌊S·2^(F_o−F_x) / averaged⌋ = ⌊N / D⌋. N is first offset by B, the smallest multiple of D that is at least −N_min,
// so that N + B ≥ 0 and ⌊N / D⌋ = ⌊(N + B) / D⌋ − B / D. Then with M = ⌈2^s / D⌉ and
// e = M·D − 2^s (0 ≤ e < D), writing N + B = q·D + r (0 ≤ r < D):
//   (N + B) · M / 2^s = q + r / D + (N + B) · e / (D · 2^s),
// and the last two terms stay below 1 when (N + B) · e < 2^s, because r ≤ D − 1. So
// ⌊(N + B) · M / 2^s⌋ = q for every N + B ≤ U when U · e < 2^s; s is the smallest such shift.

#include <mase/core/error.hpp>
#include <mase/eval/fixed_functions.hpp>
#include <mase/eval/fixed_rules.hpp>
#include <mase/format/fixed.hpp>
#include <mase/eval/pool_windows.hpp>
#include <mase/ir/graph.hpp>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <limits>
#include <optional>
#include <type_traits>
#include <vector>

#include <fmt/core.h>

namespace mase::eval {

__extension__ using uint128 = unsigned __int128;  // the reciprocal's products (int128's unsigned twin)

// ⌊n / d⌋ for d > 0, rounding towards −∞ (C++'s division truncates towards 0).
constexpr std::int64_t floor_divide(std::int64_t n, std::int64_t d) noexcept {
  const std::int64_t q = n / d;
  return (n % d != 0 && n < 0) ? q - 1 : q;
}

struct mean_rule {
  std::int64_t count = 1;           // the most codes a sum adds
  std::int64_t averaged = 1;        // the count the sum is divided by
  int input_frac = 0;
  fixed_fmt output{};
  int sum_width = 0;                // S's two's-complement width: W_x + ⌈log2 count⌉
  int numerator_shift = 0;          // N = S · 2^numerator_shift
  std::int64_t divisor = 1;         // D
  std::int64_t offset = 0;          // B: a multiple of D, N + B ≥ 0
  std::int64_t offset_quotient = 0; // B / D
  std::int64_t largest_offset_numerator = 0;  // U: the largest N + B
  std::int64_t multiplier = 1;      // M = ⌈2^shift / D⌉
  int shift = 0;                    // s

  // The definition: the floor of the exact quotient, saturated to the output format.
  constexpr std::int64_t apply(std::int64_t sum) const noexcept {
    return saturate(floor_divide(sum * (std::int64_t{1} << numerator_shift), divisor));
  }
  // The hardware's steps: offset, multiply, shift, remove the offset's quotient, saturate.
  constexpr std::int64_t apply_by_reciprocal(std::int64_t sum) const noexcept {
    const auto positive = static_cast<uint128>(sum * (std::int64_t{1} << numerator_shift) + offset);
    const auto quotient = static_cast<std::int64_t>((positive * static_cast<uint128>(multiplier)) >> shift);
    return saturate(quotient - offset_quotient);
  }
  // The hardware's unsigned operands: N + B (0 … U) and M, at least a bit each; their product.
  constexpr int numerator_width() const noexcept { return unsigned_width(largest_offset_numerator); }
  constexpr int multiplier_width() const noexcept { return unsigned_width(multiplier); }
  constexpr int product_width() const noexcept { return numerator_width() + multiplier_width(); }

private:
  static constexpr int unsigned_width(std::int64_t largest) noexcept {
    return std::max(1, static_cast<int>(std::bit_width(static_cast<std::uint64_t>(largest))));
  }
  constexpr std::int64_t saturate(std::int64_t q) const noexcept {
    const integer_range range = output.saturation_range();
    return q < range.lo ? range.lo : (q > range.hi ? range.hi : q);
  }
};

// The rule for sums of at most `count` codes of `input`, divided by `averaged`, into `output`; an
// error when the numbers need more than 64-bit integers (the numerator) or 126-bit products.
inline mean_rule make_mean_rule(const fixed_fmt& input, const fixed_fmt& output, std::int64_t count,
                                std::int64_t averaged) {
  require(count >= 1 && averaged >= 1, "mean: the count of averaged values must be at least 1 (got {} and {})", count,
          averaged);
  mean_rule r{.count = count, .averaged = averaged, .input_frac = input.frac, .output = output};
  r.sum_width = input.width + ceil_log2(count);
  r.numerator_shift = std::max(0, output.frac - input.frac);
  const int divisor_shift = std::max(0, input.frac - output.frac);
  require(r.sum_width + r.numerator_shift <= 62 && std::bit_width(static_cast<std::uint64_t>(averaged)) + divisor_shift <= 62,
          "mean: a mean of {} values of {} bits into {} fraction bits (from {}) needs more than 64-bit integers; "
          "use narrower formats",
          count, input.width, output.frac, input.frac);
  r.divisor = averaged << divisor_shift;
  const integer_range codes = range_of(input.width, input.is_signed);
  const std::int64_t numerator_min = codes.lo * count * (std::int64_t{1} << r.numerator_shift);
  const std::int64_t numerator_max = codes.hi * count * (std::int64_t{1} << r.numerator_shift);
  r.offset_quotient = numerator_min >= 0 ? 0 : (-numerator_min + r.divisor - 1) / r.divisor;
  r.offset = r.offset_quotient * r.divisor;
  r.largest_offset_numerator = numerator_max + r.offset;
  using u128 = uint128;
  const auto u = static_cast<u128>(r.largest_offset_numerator);
  for (int s = 0; s <= 126; ++s) {
    const u128 power = u128{1} << s;
    const u128 m = (power + static_cast<u128>(r.divisor) - 1) / static_cast<u128>(r.divisor);
    if (m > static_cast<u128>(std::numeric_limits<std::int64_t>::max())) break;
    const u128 excess = m * static_cast<u128>(r.divisor) - power;
    if (u * excess < power) {
      r.multiplier = static_cast<std::int64_t>(m);
      r.shift = s;
      return r;
    }
  }
  throw error(fmt::format("mean: no 64-bit reciprocal divides by {} exactly over {}-bit numerators; use narrower formats",
                          r.divisor, std::bit_width(static_cast<std::uint64_t>(r.largest_offset_numerator))));
}

// The rule for means of `count` codes (the sum divided by its own count).
inline mean_rule make_mean_rule(const fixed_fmt& input, const fixed_fmt& output, std::int64_t count) {
  return make_mean_rule(input, output, count, count);
}

// An average pool's rules: one mean_rule per divisor its windows take (PyTorch's divisors differ
// at the borders without count_include_pad, and at ceil_mode's overhanging windows), each for sums
// of at most a whole window's codes.
struct window_mean_rule {
  std::vector<mean_rule> by_divisor;  // sorted by `averaged`
  pooling_detail::planes planned{};   // the windows the divisors were found over (the metadata's shapes)

  const mean_rule& for_divisor(std::int64_t averaged) const noexcept {
    auto it = std::lower_bound(by_divisor.begin(), by_divisor.end(), averaged,
                               [](const mean_rule& r, std::int64_t d) { return r.averaged < d; });
    return it != by_divisor.end() ? *it : by_divisor.back();  // every divisor has its rule
  }
  // The one divisor of a pool whose windows all take the same (what the hardware divides by), or 0.
  std::int64_t uniform_divisor() const noexcept { return by_divisor.size() == 1 ? by_divisor[0].averaged : 0; }
};

// The spatial dimensions an average pool works over.
template <class Op>
constexpr int pool_spatial_rank() noexcept {
  return std::is_same_v<Op, op::avg_pool1d> ? 1 : std::is_same_v<Op, op::avg_pool2d> ? 2 : 3;
}
template <class Op>
constexpr std::int64_t divisor_override_of(const Op& pool) noexcept {
  if constexpr (requires { pool.divisor_override; }) return pool.divisor_override;
  else return 0;
}

// An average pool's rules over the windows of `p`: one per divisor they take (the divisor is a
// product of one factor per axis, so the distinct ones come from each axis's distinct windows).
inline window_mean_rule make_window_mean_rule(const pooling_detail::planes& p, bool count_include_pad,
                                              std::int64_t divisor_override, const fixed_fmt& input,
                                              const fixed_fmt& output) {
  using pooling_detail::average_window;
  const auto windows = [](const pooling_detail::axis& a) {
    std::vector<average_window> distinct;
    for (std::int64_t o = 0; o < a.out; ++o) {
      const average_window w = pooling_detail::average_window_of(a, o);
      if (w.first >= w.last) continue;  // padding only: its result is 0, no division
      const bool seen = std::any_of(distinct.begin(), distinct.end(), [&](const average_window& v) {
        return v.padded == w.padded && v.inside() == w.inside();
      });
      if (!seen) distinct.push_back(w);
    }
    return distinct;
  };
  std::vector<std::int64_t> divisors;
  for (const average_window& d : windows(p.d))
    for (const average_window& h : windows(p.h))
      for (const average_window& w : windows(p.w))
        divisors.push_back(pooling_detail::average_divisor(d, h, w, count_include_pad, divisor_override));
  std::sort(divisors.begin(), divisors.end());
  divisors.erase(std::unique(divisors.begin(), divisors.end()), divisors.end());
  window_mean_rule rules{.by_divisor = {}, .planned = p};
  const std::int64_t window = p.d.kernel * p.h.kernel * p.w.kernel;
  for (std::int64_t divisor : divisors) rules.by_divisor.push_back(make_mean_rule(input, output, window, divisor));
  return rules;
}

// The windows of avg pool node n over the shapes in its metadata.
template <class Op>
pooling_detail::planes window_planes_of(const node& n, const Op& pool) {
  const auto arg = n.meta.common.args.find("data_in_0");
  const auto result = n.meta.common.results.find("data_out_0");
  require(arg != n.meta.common.args.end() && std::holds_alternative<tensor_meta>(arg->second) &&
              result != n.meta.common.results.end(),
          "node {} ({}): no input or result shape in the metadata; run add_common_metadata first", n.name, Op::name);
  return pooling_detail::window_planes(pool, std::get<tensor_meta>(arg->second).shape, result->second.shape,
                                       pool_spatial_rank<Op>());
}

// Avg pool node n's rules for `input` codes into `output` over the shapes in its metadata; none
// when it pools nothing, or only windows of padding.
template <class Op>
std::optional<window_mean_rule> window_mean_rule_of(const node& n, const Op& pool, const fixed_fmt& input,
                                                    const fixed_fmt& output) {
  const pooling_detail::planes planes = window_planes_of(n, pool);
  if (planes.count == 0) return std::nullopt;
  window_mean_rule rules = make_window_mean_rule(planes, pool.count_include_pad, divisor_override_of(pool), input, output);
  if (rules.by_divisor.empty()) return std::nullopt;
  return rules;
}

// How many consecutive values each result of node n averages when it is a global mean (a mean
// over trailing dimensions, or an adaptive average pool to size 1: op::mean::trailing_count),
// from its input's shape in the metadata; 0 for any other node.
inline std::int64_t averaged_count(const node& n) {
  const auto arg = n.meta.common.args.find("data_in_0");
  if (arg == n.meta.common.args.end()) return 0;
  const tensor_meta* in = std::get_if<tensor_meta>(&arg->second);
  if (in == nullptr) return 0;
  if (const auto* m = n.op.get_if<op::mean>()) return m->trailing_count(in->shape);
  if (const auto* p = n.op.get_if<op::adaptive_avg_pool1d>()) return p->trailing_count(in->shape);
  if (const auto* p = n.op.get_if<op::adaptive_avg_pool2d>()) return p->trailing_count(in->shape);
  return 0;
}

}  // namespace mase::eval
