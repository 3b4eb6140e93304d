// add_common_metadata reads the metadata init_metadata creates: running it first must not compile.
// As a unit that links mase::mase (the default) sees the headers: declarations, not definitions.
#define MASE_SEPARATE_COMPILATION
#include <mase/pass/add_common_metadata.hpp>
#include <mase/pass/init_metadata.hpp>

int main() {
  mase::graph g;
  auto annotated = g | (mase::add_common_metadata | mase::init_metadata);
  (void)annotated;
}
