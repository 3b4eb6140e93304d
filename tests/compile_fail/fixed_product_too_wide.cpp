// The exact product of fixed<40> and fixed<30> needs 70 bits: a static_assert says what to do.
#include <mase/format/fixed.hpp>

auto f(mase::fixed<40, 0> a, mase::fixed<30, 0> b) { return a * b; }
