#pragma once
// $readmemh words: several fixed-point codes of any width packed into one word (lane 0 in the
// least significant bits), written as ceil(bits / 4) hex digits, most significant first. Packing
// whole words (not element by element) is what makes widths that are not multiples of 4 exact.

#include <cstdint>
#include <span>
#include <string>

namespace mase::verilog {

// Appends one word of codes.size() lanes of `width` bits, and a newline.
inline void append_hex_word(std::string& out, std::span<const std::int64_t> codes, int width) {
  const std::size_t bits = codes.size() * static_cast<std::size_t>(width);
  const std::size_t digits = (bits + 3) / 4;
  const auto bit = [&](std::size_t b) -> unsigned {
    if (b >= bits) return 0;
    const std::size_t lane = b / static_cast<std::size_t>(width);
    const std::size_t within = b % static_cast<std::size_t>(width);
    return static_cast<unsigned>((static_cast<std::uint64_t>(codes[lane]) >> within) & 1u);
  };
  for (std::size_t d = digits; d-- > 0;) {
    const unsigned nibble = bit(4 * d) | bit(4 * d + 1) << 1 | bit(4 * d + 2) << 2 | bit(4 * d + 3) << 3;
    out.push_back("0123456789abcdef"[nibble]);
  }
  out.push_back('\n');
}

}  // namespace mase::verilog
