// init_metadata resets metadata, so a pass needing common metadata after it must not compile
// even though add_common_metadata ran earlier.
// As a unit that links mase::mase (the default) sees the headers: declarations, not definitions.
#define MASE_SEPARATE_COMPILATION
#include <mase/pass/add_common_metadata.hpp>
#include <mase/pass/init_metadata.hpp>

int main() {
  constexpr auto needs_common = mase::make_pass<mase::facts<mase::fact::common_metadata>>([](const mase::graph&) {});
  mase::graph g;
  auto done = g | mase::init_metadata | mase::add_common_metadata | mase::init_metadata | needs_common;
  (void)done;
}
