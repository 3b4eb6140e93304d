// Must compile: fixed<>'s constexpr constructor documents "±inf saturate", so converting an
// infinity is a constant expression like any other value.
#include <mase/format/fixed.hpp>

#include <limits>

static_assert(mase::fixed<8, 3>(std::numeric_limits<double>::infinity()).raw() == 127);
static_assert(mase::fixed<8, 3>(-std::numeric_limits<double>::infinity()).raw() == -128);
static_assert(mase::fixed<8, 3, true, mase::rounding::floor, mase::overflow::wrap>(
                  std::numeric_limits<double>::infinity()).raw() == 127);
