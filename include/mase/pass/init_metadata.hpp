#pragma once
// init_metadata: gives every node fresh metadata (MASE's init_metadata_analysis_pass), with
// mase_op and mase_type set from the node's op.

#include <mase/pass/pipeline.hpp>

namespace mase {

struct init_metadata_pass {
  using needs = facts<>;
  using provides = facts<fact::metadata_initialised>;
  using invalidates = facts<fact::common_metadata, fact::software_metadata, fact::statistics, fact::quantized,
                            fact::hardware_metadata>;

  void run(graph& g) const {
    g.for_each_node([](node& n) {
      n.meta = node_metadata{};
      n.meta.common.mase_op = std::string(n.op_name());
      n.meta.common.mase_type = n.kind();
    });
  }
};

inline constexpr init_metadata_pass init_metadata{};

}  // namespace mase
