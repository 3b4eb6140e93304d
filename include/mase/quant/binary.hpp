#pragma once
// Array quantizers, encoders and decoders for binary, ternary and residual-sign formats.
// NaN stays NaN in all three.

#include <mase/core/dispatch.hpp>
#include <mase/format/binary.hpp>
#include <mase/core/error.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>

namespace mase {

namespace detail {
inline void quantize_binary_run(const float* in, float* out, std::size_t n) noexcept {
  for (std::size_t i = 0; i < n; ++i) {
    const float x = in[i];
    out[i] = x >= 0.0f ? 1.0f : (x < 0.0f ? -1.0f : x);
  }
}
}  // namespace detail

inline void quantize(const binary_fmt&, std::span<const float> in, std::span<float> out) {
  require(in.size() == out.size(), "quantize(binary): input and output sizes differ");
  dispatch::run<&detail::quantize_binary_run>(in.data(), out.data(), in.size());
}

inline std::uint64_t encode(const binary_fmt& f, float x) {
  require(!std::isnan(x), "encode(binary): NaN has no code");
  float y = x;
  quantize(f, std::span<const float>(&x, 1), std::span<float>(&y, 1));
  return y > 0 ? 1u : 0u;
}

inline float decode(const binary_fmt&, std::uint64_t code) noexcept { return (code & 1u) ? 1.0f : -1.0f; }

namespace detail {

// The largest float32 <= t (t >= 0). For a float x, x > t exactly when x > this, and x < -t
// exactly when x < -this: no float lies strictly between it and t. So the ternary loop compares
// in float32 (twice the lanes of double) with the result of comparing in double.
inline float float_at_or_below(double t) noexcept {
  float lo = static_cast<float>(t);
  if (static_cast<double>(lo) > t) lo = std::nextafter(lo, 0.0f);
  return lo;
}

inline void quantize_ternary_run(const float* in, float* out, std::size_t n, float t) noexcept {
  for (std::size_t i = 0; i < n; ++i) {
    const float x = in[i];
    out[i] = x > t ? 1.0f : x < -t ? -1.0f : (x == x ? 0.0f : x);
  }
}

}  // namespace detail

inline void quantize(const ternary_fmt& f, std::span<const float> in, std::span<float> out) {
  require(in.size() == out.size(), "quantize(ternary): input and output sizes differ");
  // Same as comparing double(x) with the double threshold, for any threshold.
  dispatch::run<&detail::quantize_ternary_run>(in.data(), out.data(), in.size(), detail::float_at_or_below(f.threshold));
}

// Two-bit two's complement: 0 -> 0b00, +1 -> 0b01, -1 -> 0b11.
inline std::uint64_t encode(const ternary_fmt& f, float x) {
  require(!std::isnan(x), "encode(ternary): NaN has no code");
  float y = x;
  quantize(f, std::span<const float>(&x, 1), std::span<float>(&y, 1));
  return y > 0 ? 1u : y < 0 ? 3u : 0u;
}

inline float decode(const ternary_fmt&, std::uint64_t code) noexcept {
  switch (code & 3u) {
    case 1u: return 1.0f;
    case 3u: return -1.0f;
    default: return 0.0f;
  }
}

inline void quantize(const residual_sign_fmt& f, std::span<const float> in, std::span<float> out) {
  require(in.size() == out.size(), "quantize(residual_sign): input and output sizes differ");
  for (std::size_t i = 0; i < in.size(); ++i) {
    const double x = in[i];
    double residual = x;
    double y = 0;
    for (int l = 0; l < f.levels; ++l) {
      const double term = (residual >= 0 ? 1.0 : -1.0) * std::abs(f.means[static_cast<std::size_t>(l)]);
      y += term;
      residual -= term;
    }
    out[i] = std::isnan(x) ? in[i] : static_cast<float>(y);
  }
}

// Bit l is 1 where level l's sign is +1.
inline std::uint64_t encode(const residual_sign_fmt& f, float x) {
  require(!std::isnan(x), "encode(residual_sign): NaN has no code");
  double residual = x;
  std::uint64_t code = 0;
  for (int l = 0; l < f.levels; ++l) {
    const bool positive = residual >= 0;
    residual -= (positive ? 1.0 : -1.0) * std::abs(f.means[static_cast<std::size_t>(l)]);
    code |= (positive ? std::uint64_t{1} : 0) << l;
  }
  return code;
}

inline float decode(const residual_sign_fmt& f, std::uint64_t code) noexcept {
  double y = 0;
  for (int l = 0; l < f.levels; ++l) {
    y += (((code >> l) & 1u) ? 1.0 : -1.0) * std::abs(f.means[static_cast<std::size_t>(l)]);
  }
  return static_cast<float>(y);
}

}  // namespace mase
