#pragma once
// fixed_string: a string usable as a C++20 template argument, so a static graph's node names
// are part of its type and appear in the compiler's diagnostics.

#include <algorithm>
#include <cstddef>
#include <string_view>

namespace mase {

template <std::size_t N>
struct fixed_string {
  char chars[N]{};  // includes the terminating zero

  constexpr fixed_string() noexcept = default;  // all zeros: text built at compile time (joined)

  constexpr fixed_string(const char (&text)[N]) noexcept { std::copy_n(text, N, chars); }  // NOLINT: implicit on purpose

  constexpr std::string_view view() const noexcept { return {chars, N - 1}; }
  constexpr const char* c_str() const noexcept { return chars; }
  constexpr std::size_t size() const noexcept { return N - 1; }

  template <std::size_t M>
  constexpr bool operator==(const fixed_string<M>& other) const noexcept {
    return view() == other.view();
  }
};

// Parts joined at compile time into one string with static storage, so its c_str() can be kept
// anywhere: the names and messages of an op family whose spelling follows a template argument
// (op::conv<2> is "conv2d").
template <fixed_string... Parts>
inline constexpr auto joined = [] {
  fixed_string<(Parts.size() + ... + 0) + 1> text;
  std::size_t at = 0;
  ((std::copy_n(Parts.chars, Parts.size(), text.chars + at), at += Parts.size()), ...);
  return text;
}();

// A decimal digit as text: digit_text<2> is "2".
template <int Digit>
  requires(Digit >= 0 && Digit <= 9)
inline constexpr fixed_string<2> digit_text = [] {
  const char text[2] = {static_cast<char>('0' + Digit), '\0'};
  return fixed_string<2>(text);
}();

}  // namespace mase
