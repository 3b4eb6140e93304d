// A compile-time minifloat without exponent bits.
#include <mase/quant/minifloat.hpp>

#include <span>

void f(std::span<const float> in, std::span<float> out) {
  mase::quantize<mase::minifloat_fmt{.exp_bits = 0, .man_bits = 3, .bias = 7}>(in, out);
}
