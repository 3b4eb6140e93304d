#pragma once
// init_metadata's body (pass/init_metadata.hpp declares it): inline in the header-only mode,
// compiled once in mase::mase (src/passes.cpp) otherwise.

#include <mase/pass/init_metadata.hpp>

// A unit that links the compiled library (mase::mase) gets these from the library; defining them again here would
// break the link with duplicate symbols.
#if MASE_EXTERN_INSTANTIATIONS && !defined(MASE_DEFINE_COMPILED)
#error "this header holds definitions that the compiled library (mase::mase) provides; include <mase/pass/init_metadata.hpp> instead"
#endif

#include <string>

namespace mase {

MASE_COMPILED_INLINE void init_metadata_pass::run(graph& g) const {
  g.for_each_node([](node& n) {
    n.meta = node_metadata{};
    n.meta.common.mase_op = std::string(n.op_name());
    n.meta.common.mase_type = n.kind();
  });
}

}  // namespace mase
