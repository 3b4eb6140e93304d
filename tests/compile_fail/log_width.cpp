// A compile-time log format of one bit (no room for sign and exponent).
#include <mase/quant/log.hpp>

#include <span>

void f(std::span<const float> in, std::span<float> out) {
  mase::quantize<mase::log_fmt{.width = 1, .bias = 0}>(in, out);
}
