// float + fixed: deliberately deleted.
#include <mase/format/fixed.hpp>

auto f(mase::fixed<8, 3> x) { return 0.5f + x; }
