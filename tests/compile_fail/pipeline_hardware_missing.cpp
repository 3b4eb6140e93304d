// A pass needing hardware metadata (as emit_verilog will) before add_hardware_metadata.
// As a unit that links mase::mase (the default) sees the headers: declarations, not definitions.
#define MASE_SEPARATE_COMPILATION
#include <mase/pass/add_common_metadata.hpp>
#include <mase/pass/init_metadata.hpp>

int main() {
  constexpr auto emit = mase::make_pass<mase::facts<mase::fact::hardware_metadata>>([](const mase::graph&) {});
  mase::graph g;
  auto done = g | mase::init_metadata | mase::add_common_metadata | emit;
  (void)done;
}
