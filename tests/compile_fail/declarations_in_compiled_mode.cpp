// The control of definitions_in_compiled_mode: in the compiled mode every umbrella header
// declares what mase::mase defines, and compiles cleanly.
#define MASE_SEPARATE_COMPILATION
#include <mase/mase.hpp>
#include <mase/verilog.hpp>
