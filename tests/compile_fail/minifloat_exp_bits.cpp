// A compile-time minifloat with 9 exponent bits: the minifloat rule's message must be in the diagnostic.
#include <mase/quant/minifloat.hpp>

#include <span>

void f(std::span<const float> in, std::span<float> out) {
  mase::quantize<mase::minifloat_fmt{.exp_bits = 9, .man_bits = 3, .bias = 7}>(in, out);
}
