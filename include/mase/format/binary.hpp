#pragma once
// One- and two-level formats: binary (±1), ternary (-1, 0, +1 with a threshold) and
// residual sign (a sum of `levels` binary terms with fixed magnitudes).

#include <mase/format/descriptor.hpp>

#include <array>

namespace mase {

// ±1; zero and -0.0 map to +1 (as MASE's bipolar binary quantizer).
struct binary_fmt {
  constexpr bool operator==(const binary_fmt&) const = default;
  constexpr int bits() const noexcept { return 1; }
};

// +1 above `threshold`, -1 below `-threshold`, else 0. MASE computes a per-sample threshold
// and ignores its argument; here the threshold is part of the format (see mase::compat for MASE's).
struct ternary_fmt {
  double threshold = 0.5;
  constexpr bool operator==(const ternary_fmt&) const = default;
  constexpr int bits() const noexcept { return 2; }
};

constexpr void check(const ternary_fmt& f) {
  detail::format_rule(f.threshold >= 0.0 && f.threshold < 1.0,
                      "ternary: the threshold must lie in [0, 1), so that -1, 0 and +1 quantize to themselves");
}

// x ≈ Σ_l s_l·|means[l]|, s_l = ±1 chosen greedily on the residual (residual >= 0 gives +1;
// MASE's sign(0) = 0 would give a third level, see docs/formats.md).
struct residual_sign_fmt {
  int levels = 1;
  std::array<double, 4> means{1.0, 0.0, 0.0, 0.0};
  constexpr bool operator==(const residual_sign_fmt&) const = default;
  constexpr int bits() const noexcept { return levels; }
};

constexpr void check(const residual_sign_fmt& f) {
  detail::format_rule(f.levels >= 1 && f.levels <= 4, "residual_sign: levels must be between 1 and 4");
}

}  // namespace mase

namespace mase {
constexpr void check(const binary_fmt&) noexcept {}
}  // namespace mase
