#pragma once
// Logarithmic format: a sign bit and a (width-1)-bit exponent code c; c = 0 is ±0 and
// c >= 1 is ±2^(c - bias). Unlike MASE's log quantizer (which has no zero and maps 0 to
// +2^-bias), zero is representable, at the cost of the smallest MASE magnitude.

#include <mase/format/descriptor.hpp>

namespace mase {

struct log_fmt {
  int width = 8;
  int bias = 63;  // MASE's default is 2^(width-2) - 1

  constexpr bool operator==(const log_fmt&) const = default;

  constexpr int bits() const noexcept { return width; }
  constexpr int exp_bits() const noexcept { return width - 1; }
  constexpr int emin() const noexcept { return 1 - bias; }
  constexpr int emax() const noexcept { return (1 << (width - 1)) - 1 - bias; }
};

constexpr int default_log_bias(int width) noexcept { return (1 << (width - 2)) - 1; }

constexpr void check(const log_fmt& f) {
  detail::format_rule(f.width >= 2, "log: the width must be at least 2 bits (sign and exponent)");
  detail::format_rule(f.width <= 8, "log: the width must be at most 8 bits (2^(width-1) exponent codes must fit float32's exponents)");
  detail::format_rule(f.emax() <= 127 && f.emin() >= -126,
                   "log: the bias puts the exponent range outside float32's normal range");
}

}  // namespace mase
