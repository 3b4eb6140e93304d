#pragma once
// shape: a tensor's dimensions, outermost first (PyTorch's order). Fixed capacity and structural,
// so a shape can be a template argument (static graphs) and is computed in constant
// expressions (the ops' shape rules). The same type spells lists of dimension indices
// (permute's order, a reduction's axes), where entries may be negative.

#include <mase/core/error.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>

#include <fmt/core.h>

namespace mase {

struct shape {
  static constexpr int max_rank = 8;

  std::array<std::int64_t, max_rank> dims{};
  int rank = 0;

  constexpr shape() = default;
  constexpr shape(std::initializer_list<std::int64_t> list) {
    if (list.size() > max_rank) detail_too_many_dimensions();
    for (std::int64_t d : list) dims[static_cast<std::size_t>(rank++)] = d;
  }

  constexpr int size() const noexcept { return rank; }
  constexpr bool empty() const noexcept { return rank == 0; }
  constexpr std::int64_t operator[](int i) const noexcept { return dims[static_cast<std::size_t>(i)]; }
  constexpr std::int64_t& operator[](int i) noexcept { return dims[static_cast<std::size_t>(i)]; }
  // Python-style index: -1 is the last dimension.
  constexpr std::int64_t at(int i) const noexcept { return (*this)[i < 0 ? i + rank : i]; }
  constexpr std::int64_t back() const noexcept { return dims[static_cast<std::size_t>(rank - 1)]; }
  constexpr const std::int64_t* begin() const noexcept { return dims.data(); }
  constexpr const std::int64_t* end() const noexcept { return dims.data() + rank; }

  constexpr void push_back(std::int64_t d) {
    if (rank == max_rank) detail_too_many_dimensions();
    dims[static_cast<std::size_t>(rank++)] = d;
  }

  // Number of elements: the product of the dimensions (1 for rank 0).
  constexpr std::int64_t numel() const noexcept {
    std::int64_t n = 1;
    for (std::int64_t d : *this) n *= d;
    return n;
  }

  constexpr bool operator==(const shape& other) const noexcept {
    return rank == other.rank && std::equal(begin(), end(), other.begin());
  }

private:
  // Not constexpr: reaching it in a constant expression is the compile error.
  [[noreturn]] static void detail_too_many_dimensions() {
    throw error(fmt::format("a shape has at most {} dimensions", max_rank));
  }
};

// An index list (permute order, reduction axes) is spelled with the same type.
using dims = shape;

// "[1, 784]"
inline std::string to_string(const shape& s) {
  std::string text = "[";
  for (int i = 0; i < s.size(); ++i) text += fmt::format("{}{}", i == 0 ? "" : ", ", s[i]);
  return text + "]";
}

}  // namespace mase
