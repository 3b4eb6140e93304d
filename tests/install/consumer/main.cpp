#include <mase/mase.hpp>

#include <cstdio>

int main() {
  const mase::format f = mase::parse_format("fixed<8,3>");
  const float x = 1.3f;
  float y = 0;
  mase::quantize(f, std::span<const float>(&x, 1), std::span<float>(&y, 1));
  std::printf("consumer: %s quantizes 1.3 to %g\n", mase::to_string(f).c_str(), static_cast<double>(y));
  return y == 1.25f ? 0 : 1;
}
