// verify needs nothing, but add_common_metadata still needs init_metadata before it, even when
// other passes come in between.
// As a unit that links mase::mase (the default) sees the headers: declarations, not definitions.
#define MASE_SEPARATE_COMPILATION
#include <mase/pass/add_common_metadata.hpp>
#include <mase/pass/remove_nodes.hpp>
#include <mase/pass/verify.hpp>

int main() {
  mase::graph g;
  auto annotated = g | mase::verify | mase::remove_dropout | mase::add_common_metadata;
  (void)annotated;
}
