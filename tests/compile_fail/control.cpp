// Control: valid uses of everything the compile-fail tests misuse. It must compile, so that a
// broken include path or compiler command cannot make the compile-fail tests pass by failing
// for another reason.
#include <mase/format/fixed.hpp>
#include <mase/quant/quantize.hpp>

#include <limits>
#include <span>

using mase::fixed;

static_assert(fixed<1, 3>::format.width == 1);
static_assert(fixed<63, 512>::format.frac == 512);
static_assert((fixed<32, 0>{} * fixed<31, 0>{}).format.width == 63);
static_assert((fixed<62, 0>{} + fixed<8, 0>{}).format.width == 63);
static_assert((fixed<8, 3>(1.0) * fixed<8, 4>(0.5)).to_double() == 0.5);

void control(std::span<const float> in, std::span<float> out) {
  mase::quantize<mase::minifloat_fmt{
      .exp_bits = 8, .man_bits = 3, .bias = 127, .specials = mase::special_values::ieee, .saturating = false}>(in, out);
  mase::quantize<mase::minifloat_fmt{.exp_bits = 1, .man_bits = 3, .bias = 0}>(in, out);
  mase::quantize<mase::log_fmt{.width = 2, .bias = 0}>(in, out);
  mase::quantize<mase::fixed_fmt{.width = 8, .frac = -512}>(in, out);
}
