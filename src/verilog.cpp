// mase::compiled: the Verilog emitter and its testbench writer (core/compiled.hpp).
#include <mase/verilog/emit_definitions.hpp>
#include <mase/verilog/cost_definitions.hpp>
