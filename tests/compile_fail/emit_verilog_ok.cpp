// The hardware flow in the right order compiles cleanly (with the warning flags of the others).
// As a unit that links mase::mase (the default) sees the headers: declarations, not definitions.
#define MASE_SEPARATE_COMPILATION
#include <mase/pass/add_common_metadata.hpp>
#include <mase/pass/init_metadata.hpp>
#include <mase/pass/quantize.hpp>
#include <mase/verilog.hpp>

int main() {
  const auto flow = mase::init_metadata | mase::add_common_metadata | mase::quantize(mase::quantize_config{}) |
                    mase::add_hardware_metadata({.max_parallelism = {2, 2, 2, 2}}) |
                    mase::emit_verilog({.project_dir = "unused"});
  (void)flow;
}
