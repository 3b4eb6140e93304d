// A fixed<> wider than the 63 value bits an int64_t raw word holds.
#include <mase/format/fixed.hpp>

mase::fixed<64, 0> x;
