#pragma once
// Block (shared-exponent) formats. Each element keeps a few bits; each block of elements
// shares an exponent or bias. The block shape is part of the descriptor, with MASE's rules:
// the shape is right-aligned to the tensor's dims, a missing or -1 entry spans the whole dim,
// blocks are zero-padded at the end, and `skip_first_dim` (activations) blocks each row
// separately while weights are tiled over both dims.

#include <mase/format/descriptor.hpp>
#include <mase/format/minifloat.hpp>
#include <mase/format/rounding.hpp>

#include <cstdint>
#include <string_view>

namespace mase {

struct block_shape {
  static constexpr int full = -1;  // span the whole dim
  int rows = full;                 // ignored for 1-D tensors and 2-D activations
  int cols = 16;
  bool skip_first_dim = true;      // MASE: true for activations, false for weights

  constexpr bool operator==(const block_shape&) const = default;
};

constexpr void check(const block_shape& b) {
  detail::format_rule(b.cols >= 1 || b.cols == block_shape::full, "block: the block width must be at least 1 (or -1 for the whole dim)");
  detail::format_rule(b.rows >= 1 || b.rows == block_shape::full, "block: the block height must be at least 1 (or -1 for the whole dim)");
}

// MSFP-style block floating point: a shared exponent (exp_bits, bias) per block and a
// sign-magnitude mantissa of width-1 bits per element.
struct block_fp_fmt {
  int width = 8;      // sign + mantissa
  int exp_bits = 8;   // of the shared exponent
  int bias = 127;
  block_shape block{};
  rounding round = rounding::half_even;

  constexpr bool operator==(const block_fp_fmt&) const = default;
  constexpr int man_bits() const noexcept { return width - 1; }
  constexpr int emin() const noexcept { return -bias; }
  constexpr int emax() const noexcept { return (1 << exp_bits) - 1 - bias; }
};

constexpr void check(const block_fp_fmt& f) {
  detail::format_rule(f.width >= 2 && f.width <= 24, "block_fp: the width (sign + mantissa) must be between 2 and 24");
  detail::format_rule(f.exp_bits >= 1 && f.exp_bits <= 8, "block_fp: the shared exponent must have 1 to 8 bits");
  detail::format_rule(f.emin() - f.man_bits() >= -149 && f.emax() <= 128,
                   "block_fp: the bias puts the exponent range outside float32");
  check(f.block);
}

// Block minifloat: minifloat elements whose exponent bias is chosen per block
// (bias_bits wide, 0 <= bias < 2^bias_bits) from the block's largest magnitude.
struct block_minifloat_fmt {
  int width = 8;
  int exp_bits = 4;
  int bias_bits = 8;
  block_shape block{};

  constexpr bool operator==(const block_minifloat_fmt&) const = default;
  constexpr int man_bits() const noexcept { return width - 1 - exp_bits; }
};

constexpr void check(const block_minifloat_fmt& f) {
  detail::format_rule(f.exp_bits >= 1 && f.exp_bits <= 8, "block_minifloat: the element exponent must have 1 to 8 bits");
  detail::format_rule(f.width - 1 - f.exp_bits >= 0 && f.width - 1 - f.exp_bits <= 23,
                   "block_minifloat: width - 1 - exp_bits (the mantissa) must lie in [0, 23]");
  detail::format_rule(f.bias_bits >= 1 && f.bias_bits <= 8, "block_minifloat: the bias must have 1 to 8 bits");
  check(f.block);
}

// Block log: log elements (sign + width-1 exponent bits) whose bias is chosen per block.
struct block_log_fmt {
  int width = 8;
  int bias_bits = 8;
  block_shape block{};

  constexpr bool operator==(const block_log_fmt&) const = default;
};

constexpr void check(const block_log_fmt& f) {
  detail::format_rule(f.width >= 2 && f.width <= 8, "block_log: the width must be between 2 and 8 bits");
  detail::format_rule(f.bias_bits >= 1 && f.bias_bits <= 8, "block_log: the bias must have 1 to 8 bits");
  check(f.block);
}

// MX-style integer block (MASE's mxint_hardware family): a shared exponent of exp_bits and
// width-bit two's-complement elements with width-2 fraction bits, so the block max lies in [1, 2)
// times the shared scale. Elements saturate symmetrically, as OCP MXINT8.
struct mxint_fmt {
  int width = 8;
  int exp_bits = 8;
  block_shape block{.rows = 1, .cols = 32, .skip_first_dim = false};
  rounding round = rounding::half_even;

  constexpr bool operator==(const mxint_fmt&) const = default;
  constexpr int scale_bias() const noexcept { return ieee_exponent_bias(exp_bits); }
  constexpr int scale_emin() const noexcept { return -scale_bias(); }
  constexpr int scale_emax() const noexcept { return scale_bias(); }
};

constexpr void check(const mxint_fmt& f) {
  detail::format_rule(f.width >= 2 && f.width <= 24, "mxint: the element width must be between 2 and 24");
  detail::format_rule(f.exp_bits >= 2 && f.exp_bits <= 8, "mxint: the shared exponent must have 2 to 8 bits");
  check(f.block);
}

// OCP Microscaling (MX v1.0): blocks of `block_size` consecutive elements along the last dim
// share an E8M0 scale 2^s, s in [-127, 127]; elements are an OCP FP8/FP6/FP4 or a two's-complement int.
enum class mx_element : std::uint8_t { int8, int4, int2, fp8_e4m3, fp8_e5m2, fp6_e3m2, fp6_e2m3, fp4_e2m1 };

constexpr std::string_view to_string(mx_element e) noexcept {
  switch (e) {
    case mx_element::int8: return "int8";
    case mx_element::int4: return "int4";
    case mx_element::int2: return "int2";
    case mx_element::fp8_e4m3: return "fp8_e4m3";
    case mx_element::fp8_e5m2: return "fp8_e5m2";
    case mx_element::fp6_e3m2: return "fp6_e3m2";
    case mx_element::fp6_e2m3: return "fp6_e2m3";
    case mx_element::fp4_e2m1: return "fp4_e2m1";
  }
  return "?";
}

inline constexpr mx_element all_mx_elements[] = {mx_element::int8,     mx_element::int4,     mx_element::int2,
                                                 mx_element::fp8_e4m3, mx_element::fp8_e5m2, mx_element::fp6_e3m2,
                                                 mx_element::fp6_e2m3, mx_element::fp4_e2m1};

constexpr bool is_integer_element(mx_element e) noexcept {
  return e == mx_element::int8 || e == mx_element::int4 || e == mx_element::int2;
}

constexpr int integer_element_bits(mx_element e) noexcept {
  return e == mx_element::int8 ? 8 : e == mx_element::int4 ? 4 : 2;
}

// The minifloat of a float element, saturating as MX conversions do.
constexpr minifloat_fmt element_minifloat(mx_element e) noexcept {
  minifloat_fmt f = e == mx_element::fp8_e4m3   ? formats::e4m3
                    : e == mx_element::fp8_e5m2 ? formats::e5m2
                    : e == mx_element::fp6_e3m2 ? formats::e3m2
                    : e == mx_element::fp6_e2m3 ? formats::e2m3
                                                : formats::e2m1;
  f.saturating = true;
  return f;
}

// Exponent of the largest power of two an element can hold (OCP's emax_elem).
constexpr int element_emax(mx_element e) noexcept {
  return is_integer_element(e) ? 0 : element_minifloat(e).emax();
}

constexpr int element_bits(mx_element e) noexcept {
  return is_integer_element(e) ? integer_element_bits(e) : element_minifloat(e).bits();
}

struct mx_fmt {
  mx_element element = mx_element::fp8_e4m3;
  int block_size = 32;
  rounding round = rounding::half_even;

  constexpr bool operator==(const mx_fmt&) const = default;
  static constexpr int scale_bits = 8;
  static constexpr int scale_emin = -127;
  static constexpr int scale_emax = 127;
};

constexpr void check(const mx_fmt& f) {
  detail::format_rule(f.block_size >= 1, "mx: the block size must be at least 1");
}

namespace formats {
inline constexpr mx_fmt mxint8{.element = mx_element::int8};
inline constexpr mx_fmt mxfp8_e4m3{.element = mx_element::fp8_e4m3};
inline constexpr mx_fmt mxfp8_e5m2{.element = mx_element::fp8_e5m2};
inline constexpr mx_fmt mxfp6_e3m2{.element = mx_element::fp6_e3m2};
inline constexpr mx_fmt mxfp6_e2m3{.element = mx_element::fp6_e2m3};
inline constexpr mx_fmt mxfp4{.element = mx_element::fp4_e2m1};
}  // namespace formats

}  // namespace mase
