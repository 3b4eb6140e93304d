// A fixed<> of zero bits: the format rule's message must be in the diagnostic.
#include <mase/format/fixed.hpp>

mase::fixed<0, 3> x;
