// mase::compiled: the Verilog emitter and its testbench writer (core/compiled.hpp).
// This unit defines what the headers declare (core/compiled.hpp).
#define MASE_DEFINE_COMPILED
#include <mase/verilog/emit_definitions.hpp>
#include <mase/verilog/cost_definitions.hpp>
