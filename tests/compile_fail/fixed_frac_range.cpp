// A fraction width outside [-512, 512] (a rule whose message is on a continuation line).
#include <mase/format/fixed.hpp>

mase::fixed<8, 600> x;
