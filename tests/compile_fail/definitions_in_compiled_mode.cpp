// A unit that links mase::mase (MASE_SEPARATE_COMPILATION) and includes a definitions header:
// the library already holds those functions, so the header refuses and names the one to include.
#define MASE_SEPARATE_COMPILATION
#include <mase/pass/prune_definitions.hpp>
