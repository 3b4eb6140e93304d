// fixed * double: deliberately deleted (say which format you mean).
#include <mase/format/fixed.hpp>

auto f(mase::fixed<8, 3> x) { return x * 0.5; }
