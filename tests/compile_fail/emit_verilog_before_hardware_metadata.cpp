// emit_verilog on a quantized graph that has no hardware metadata yet: the diagnostic names
// add_hardware_metadata.
// As a unit that links mase::mase (the default) sees the headers: declarations, not definitions.
#define MASE_SEPARATE_COMPILATION
#include <mase/pass/add_common_metadata.hpp>
#include <mase/pass/init_metadata.hpp>
#include <mase/pass/quantize.hpp>
#include <mase/verilog.hpp>

int main() {
  mase::graph g;
  auto emitted = g | mase::init_metadata | mase::add_common_metadata | mase::quantize(mase::quantize_config{}) |
                 mase::emit_verilog({.project_dir = "unused"});
  (void)emitted;
}
