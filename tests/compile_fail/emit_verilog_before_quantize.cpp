// add_hardware_metadata and emit_verilog on a graph that was never quantized: the diagnostic
// names quantize (the hardware components are fixed point).
// As a unit that links mase::mase (the default) sees the headers: declarations, not definitions.
#define MASE_SEPARATE_COMPILATION
#include <mase/pass/add_common_metadata.hpp>
#include <mase/pass/init_metadata.hpp>
#include <mase/verilog.hpp>

int main() {
  mase::graph g;
  auto emitted = g | mase::init_metadata | mase::add_common_metadata | mase::add_hardware_metadata |
                 mase::emit_verilog({.project_dir = "unused"});
  (void)emitted;
}
