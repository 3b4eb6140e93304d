#pragma once
// What every format descriptor shares: validation that is a compile error for types and a
// mase::error for runtime formats, from one list of rules per format.

#include <mase/core/error.hpp>

#include <bit>
#include <cstdint>
#include <string>

namespace mase {

namespace detail {
// Not constexpr on purpose: reaching it during constant evaluation makes the compiler stop, and
// its diagnostic prints the call of format_rule below with the message as its argument.
// At run time it throws.
[[noreturn]] inline void invalid_format_descriptor(const char* message) { throw error(message); }

// A format rule: when `ok` is false, the descriptor is rejected with `message`.
constexpr void format_rule(bool ok, const char* message) {
  if (!ok) invalid_format_descriptor(message);
}
}  // namespace detail

// 2^e as a floating value, exact for every e the type can represent as a normal number.
template <class T>
constexpr T exp2i(int e) noexcept {
  if constexpr (sizeof(T) == 4) {
    return std::bit_cast<T>(static_cast<std::uint32_t>(e + 127) << 23);
  } else {
    return std::bit_cast<T>(static_cast<std::uint64_t>(e + 1023) << 52);
  }
}

// floor(log2 |v|) of a finite non-zero normal value, read from its exponent field. Zero and
// subnormals read as the exponent below the normal range; callers clamp it from below.
inline int floor_log2_bits(float v) noexcept {
  return static_cast<int>((std::bit_cast<std::uint32_t>(v) >> 23) & 0xffu) - 127;
}
inline int floor_log2_bits(double v) noexcept {
  return static_cast<int>((std::bit_cast<std::uint64_t>(v) >> 52) & 0x7ffu) - 1023;
}

// floor(log2 |v|) of a finite non-zero float, exact also for subnormals (scaled into the
// normal range first). For per-block decisions; loops use floor_log2_bits and clamp.
inline int floor_log2_exact(float v) noexcept {
  const float a = v < 0 ? -v : v;
  return a < 0x1p-126f ? floor_log2_bits(a * 0x1p64f) - 64 : floor_log2_bits(a);
}

}  // namespace mase
