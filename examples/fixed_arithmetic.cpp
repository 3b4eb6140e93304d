// fixed<> arithmetic: the result type grows so that nothing is lost, as in ac_fixed; an
// explicit cast rounds and saturates back to a storage format. Everything here is constexpr.

#include <mase/format/fixed.hpp>

#include <fmt/format.h>

#include <array>
#include <type_traits>

using mase::fixed;
using mase::overflow;
using mase::rounding;

// A 4-tap dot product in fixed<8,6> (weights) x fixed<8,4> (activations).
constexpr auto dot(const std::array<fixed<8, 6>, 4>& w, const std::array<fixed<8, 4>, 4>& x) {
  auto acc = w[0] * x[0];  // fixed<16,10>
  auto sum = acc + w[1] * x[1];  // fixed<17,10>
  auto sum2 = sum + w[2] * x[2];  // fixed<18,10>
  return sum2 + w[3] * x[3];      // fixed<19,10>
}

int main() {
  constexpr std::array w{fixed<8, 6>(0.5), fixed<8, 6>(-0.75), fixed<8, 6>(1.25), fixed<8, 6>(0.015625)};
  constexpr std::array x{fixed<8, 4>(3.0), fixed<8, 4>(1.5), fixed<8, 4>(-2.0625), fixed<8, 4>(7.9375)};
  constexpr auto exact = dot(w, x);
  static_assert(std::is_same_v<std::remove_const_t<decltype(exact)>, fixed<19, 10>>);
  static_assert(exact.to_double() == 0.5 * 3.0 - 0.75 * 1.5 + 1.25 * -2.0625 + 0.015625 * 7.9375);

  // Back to 8 bits: round to nearest even and saturate, or floor and wrap as cheap hardware does.
  constexpr auto rounded = fixed<8, 4>(exact);
  constexpr auto floored = fixed<8, 4, true, rounding::floor, overflow::wrap>(exact);

  fmt::print("exact   {:>10}  raw {:>6}  (type fixed<19,10>)\n", exact.to_double(), exact.raw());
  fmt::print("rounded {:>10}  raw {:>6}  (fixed<8,4>, half_even, saturate)\n", rounded.to_double(), rounded.raw());
  fmt::print("floored {:>10}  raw {:>6}  (fixed<8,4>, floor, wrap)\n", floored.to_double(), floored.raw());
  fmt::print("fixed<8,4> spans [{}, {}] in steps of {}\n", fixed<8, 4>::lowest().to_double(),
             fixed<8, 4>::max().to_double(), fixed<8, 4>::epsilon().to_double());
  return 0;
}
