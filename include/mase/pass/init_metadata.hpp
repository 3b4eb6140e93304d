#pragma once
// init_metadata: gives every node fresh metadata (MASE's init_metadata_analysis_pass), with
// mase_op and mase_type set from the node's op.

#include <mase/core/compiled.hpp>
#include <mase/pass/pipeline.hpp>

namespace mase {

struct init_metadata_pass {
  using needs = facts<>;
  using provides = facts<fact::metadata_initialised>;
  using invalidates = facts<fact::common_metadata, fact::software_metadata, fact::statistics, fact::quantized,
                            fact::hardware_metadata>;

  // Defined in pass/init_metadata_definitions.hpp: assigning whole metadata compiles every
  // metadata member's copy and destruction, a quarter of a second (in the compiled mode, once, in
  // mase::mase).
  void run(graph& g) const;
};

inline constexpr init_metadata_pass init_metadata{};

}  // namespace mase

#if !MASE_EXTERN_INSTANTIATIONS
#include <mase/pass/init_metadata_definitions.hpp>
#endif
