// The same passes in the right order compile cleanly (with the warning flags of the others).
// As a unit that links mase::mase (the default) sees the headers: declarations, not definitions.
#define MASE_SEPARATE_COMPILATION
#include <mase/pass/add_common_metadata.hpp>
#include <mase/pass/init_metadata.hpp>
#include <mase/pass/remove_nodes.hpp>
#include <mase/pass/verify.hpp>

int main() {
  constexpr auto needs_common = mase::make_pass<mase::facts<mase::fact::common_metadata>>([](const mase::graph&) {});
  mase::graph g;
  auto done = g | mase::verify | mase::init_metadata | mase::remove_dropout | mase::add_common_metadata | needs_common;
  return static_cast<int>(done.size());
}
