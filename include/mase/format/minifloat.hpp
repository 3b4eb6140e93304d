#pragma once
// Minifloat: sign, `exp_bits` exponent bits with an explicit bias, `man_bits` stored mantissa
// bits with an implicit leading one for normal numbers. Covers IEEE-style formats (float16,
// bfloat16, OCP e5m2), OCP's NaN-only e4m3 and the finite OCP 6- and 4-bit formats.

#include <mase/format/descriptor.hpp>
#include <mase/format/rounding.hpp>

#include <cstdint>

namespace mase {

// Which codes of the top exponent are special.
enum class special_values : std::uint8_t {
  ieee,      // top exponent: mantissa 0 is ±inf, anything else NaN (float16, bfloat16, e5m2)
  nan_only,  // only the all-ones code S.1…1.1…1 is NaN (OCP e4m3): the top binade holds numbers
  finite,    // every code is a number (OCP e3m2, e2m3, e2m1; MASE's minifloat_ieee)
};

// IEEE 754's exponent bias, 2^(e-1) - 1: MASE's default for minifloats and block exponents. 0 for
// widths outside 1..30, which the format's own check then names (the shift would be undefined).
constexpr int ieee_exponent_bias(int exp_bits) noexcept {
  return exp_bits >= 1 && exp_bits <= 30 ? (1 << (exp_bits - 1)) - 1 : 0;
}

struct minifloat_fmt {
  int exp_bits = 4;
  int man_bits = 3;
  int bias = 7;
  bool subnormals = true;
  special_values specials = special_values::finite;
  bool saturating = true;  // overflow to the largest finite value rather than inf / NaN
  rounding round = rounding::half_even;

  constexpr bool operator==(const minifloat_fmt&) const = default;

  constexpr int bits() const noexcept { return 1 + exp_bits + man_bits; }
  // Exponent of the smallest normal binade.
  constexpr int emin() const noexcept { return 1 - bias; }
  // Whether the top exponent field holds numbers: always in finite formats; in NaN-only formats
  // all but the all-ones mantissa (none when there is no mantissa); never in IEEE formats.
  constexpr bool top_field_holds_numbers() const noexcept {
    return specials == special_values::finite || (specials == special_values::nan_only && man_bits > 0);
  }
  // Exponent of the largest binade that holds finite numbers.
  constexpr int emax() const noexcept { return (1 << exp_bits) - 1 - bias - (top_field_holds_numbers() ? 0 : 1); }
  // Largest finite magnitude, as the integer mantissa of the top binade (scaled by 2^(emax-man_bits)).
  constexpr std::int64_t max_mantissa() const noexcept {
    const std::int64_t all_ones = (std::int64_t{2} << man_bits) - 1;  // 1.11…1 in units of the last place
    return specials == special_values::nan_only && man_bits > 0 ? all_ones - 1 : all_ones;
  }
  constexpr double max_value() const noexcept {
    return static_cast<double>(max_mantissa()) * exp2i<double>(emax() - man_bits);  // exact
  }
  constexpr bool has_inf() const noexcept { return specials == special_values::ieee; }
  constexpr bool has_nan() const noexcept { return specials != special_values::finite; }
};

constexpr void check(const minifloat_fmt& f) {
  detail::format_rule(f.exp_bits >= 1, "minifloat: at least one exponent bit is needed");
  detail::format_rule(f.man_bits >= 0, "minifloat: the mantissa width cannot be negative");
  detail::format_rule(f.exp_bits <= 8 && f.man_bits <= 23,
                      "minifloat: at most 8 exponent and 23 mantissa bits (every value must be a float32)");
  detail::format_rule(f.specials != special_values::ieee || f.man_bits >= 1,
                      "minifloat: an IEEE-style format needs a mantissa bit to tell NaN from inf");
  detail::format_rule(f.specials != special_values::finite || f.saturating,
                      "minifloat: a format without inf/NaN codes must saturate on overflow");
  detail::format_rule(f.emax() >= f.emin(),
                      "minifloat: no normal binade is left once the top exponent holds inf/NaN; add an exponent bit");
  detail::format_rule(f.emax() <= 127,
                      "minifloat: the bias puts the largest value beyond float32 (emax must be <= 127)");
  detail::format_rule(f.emin() >= -126,
                      "minifloat: the bias puts the normal range below float32's (1 - bias must be >= -126)");
  detail::format_rule(f.emin() - f.man_bits >= -149 || !f.subnormals,
                      "minifloat: the smallest subnormal is below float32's (1 - bias - man_bits must be >= -149)");
}

// Named formats. OCP: "OCP 8-bit Floating Point Specification (OFP8)" and "OCP Microscaling
// Formats (MX) v1.0"; the MX element formats saturate on conversion.
namespace formats {
// IEEE binary32 itself: what an unquantized tensor holds (MASE's type "float", precision [32]).
inline constexpr minifloat_fmt float32{
    .exp_bits = 8, .man_bits = 23, .bias = 127, .specials = special_values::ieee, .saturating = false};
inline constexpr minifloat_fmt float16{
    .exp_bits = 5, .man_bits = 10, .bias = 15, .specials = special_values::ieee, .saturating = false};
inline constexpr minifloat_fmt bfloat16{
    .exp_bits = 8, .man_bits = 7, .bias = 127, .specials = special_values::ieee, .saturating = false};
inline constexpr minifloat_fmt e5m2{
    .exp_bits = 5, .man_bits = 2, .bias = 15, .specials = special_values::ieee, .saturating = false};
inline constexpr minifloat_fmt e4m3{
    .exp_bits = 4, .man_bits = 3, .bias = 7, .specials = special_values::nan_only, .saturating = false};
inline constexpr minifloat_fmt e3m2{.exp_bits = 3, .man_bits = 2, .bias = 3};
inline constexpr minifloat_fmt e2m3{.exp_bits = 2, .man_bits = 3, .bias = 1};
inline constexpr minifloat_fmt e2m1{.exp_bits = 2, .man_bits = 1, .bias = 1};
}  // namespace formats

}  // namespace mase
