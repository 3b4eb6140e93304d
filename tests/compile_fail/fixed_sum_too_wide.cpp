// The exact sum of two fixed<63> needs 64 bits.
#include <mase/format/fixed.hpp>

auto f(mase::fixed<63, 0> a, mase::fixed<63, 0> b) { return a + b; }
