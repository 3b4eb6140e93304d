#pragma once
// Array quantizer, encoder and decoder for the log format: round log2|x| to the nearest
// integer exactly (|x| rounds up from 2^k iff |x| >= 2^k·√2, and no float equals 2^k·√2, so
// there are no ties), flush below the smallest magnitude's lower half-step to ±0, saturate above
// the largest. NaN stays NaN; ±inf saturates to ±2^emax.

#include <mase/core/dispatch.hpp>
#include <mase/format/log.hpp>
#include <mase/core/error.hpp>

#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>

namespace mase {

namespace detail {

// The smallest float above √2: a mantissa m in [1, 2) rounds up iff m >= this.
inline constexpr float sqrt2_rounded_up = 0x1.6a09e8p+0f;
static_assert(static_cast<double>(sqrt2_rounded_up) > 1.4142135623730951 &&
              static_cast<double>(0x1.6a09e6p+0f) < 1.4142135623730951);

// The exponent log2|x| rounds to, for finite non-zero x (zero gives a value below any emin).
// Subnormal inputs are first normalised so that their exponent field is meaningful: their bits,
// read as an integer, are |x|·2^149, which converts to float32 exactly. The choice between the
// two is a mask blend on purpose: compilers turn a multiplication under a condition, or a
// condition used twice, back into branches, and then the loops below do not vectorise.
inline int nearest_log2(float x) noexcept {
  const std::uint32_t magnitude = std::bit_cast<std::uint32_t>(x) & 0x7fffffffu;
  const bool subnormal = magnitude < 0x00800000u;  // |x| < 2^-126 (zero too)
  const auto normalised =
      std::bit_cast<std::uint32_t>(static_cast<float>(static_cast<std::int32_t>(magnitude & 0x007fffffu)));
  const std::uint32_t mask = 0u - static_cast<std::uint32_t>(subnormal);  // all ones for subnormals
  const std::uint32_t bits = magnitude ^ ((magnitude ^ normalised) & mask);
  const int k = static_cast<int>(bits >> 23) - 127 - static_cast<int>(149u & mask);
  const float mantissa = std::bit_cast<float>((bits & 0x7fffffu) | 0x3f800000u);
  return k + (mantissa >= sqrt2_rounded_up ? 1 : 0);
}

// The loop every log quantization runs (block_log calls it once per block with its bias).
inline void quantize_log_run(const float* in, float* out, std::size_t n, int emin, int emax) noexcept {
  for (std::size_t i = 0; i < n; ++i) {
    const float x = in[i];
    int e = nearest_log2(x);
    const bool is_zero = e < emin;  // zero lands here too
    e = e > emax ? emax : e;
    e = e < emin ? emin : e;
    const float magnitude = is_zero ? 0.0f : exp2i<float>(e);
    const float y = std::copysign(magnitude, x);
    out[i] = std::isnan(x) ? x : y;
  }
}

}  // namespace detail

inline void quantize(const log_fmt& f, std::span<const float> in, std::span<float> out) {
  require(in.size() == out.size(), "quantize(log): input and output sizes differ");
  dispatch::run<&detail::quantize_log_run>(in.data(), out.data(), in.size(), f.emin(), f.emax());
}

template <log_fmt F>
void quantize(std::span<const float> in, std::span<float> out) {
  static_assert((check(F), true));
  quantize(F, in, out);
}

// Codes: sign | exponent code, code 0 = zero, code c >= 1 is 2^(c - bias).
inline std::uint64_t encode(const log_fmt& f, float x) {
  require(!std::isnan(x), "encode(log): NaN has no code in a log format");
  float y = x;
  quantize(f, std::span<const float>(&x, 1), std::span<float>(&y, 1));
  const std::uint64_t sign = std::signbit(y) ? std::uint64_t{1} << (f.width - 1) : 0;
  if (y == 0) return sign;
  return sign | static_cast<std::uint64_t>(std::ilogb(y) + f.bias);
}

inline float decode(const log_fmt& f, std::uint64_t code) noexcept {
  const bool negative = (code >> (f.width - 1)) & 1u;
  const auto c = static_cast<int>(code & ((std::uint64_t{1} << (f.width - 1)) - 1));
  const float magnitude = c == 0 ? 0.0f : exp2i<float>(c - f.bias);
  return negative ? -magnitude : magnitude;
}

}  // namespace mase
