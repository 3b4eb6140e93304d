// mase::mase: the Verilog emitter and its testbench writer, the cost model and the tools' runners
// (core/compiled.hpp).
// This unit defines what the headers declare (core/compiled.hpp).
#define MASE_DEFINE_COMPILED
#include <mase/verilog/emit_definitions.hpp>
#include <mase/verilog/cost_definitions.hpp>
#include <mase/verilog/tools_definitions.hpp>
