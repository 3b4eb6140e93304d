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

  constexpr fixed_string(const char (&text)[N]) noexcept { std::copy_n(text, N, chars); }  // NOLINT: implicit on purpose

  constexpr std::string_view view() const noexcept { return {chars, N - 1}; }
  constexpr const char* c_str() const noexcept { return chars; }
  constexpr std::size_t size() const noexcept { return N - 1; }

  template <std::size_t M>
  constexpr bool operator==(const fixed_string<M>& other) const noexcept {
    return view() == other.view();
  }
};

}  // namespace mase
