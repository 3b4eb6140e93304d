// A layer reads a node listed after it: nodes must come in topological order.
#include <mase/ir/static_graph.hpp>

using g = mase::static_graph<
    mase::input<"x", mase::shape{1, 16}>,
    mase::layer<"act", mase::op::relu{}, mase::from<"fc">>,
    mase::layer<"fc", mase::op::linear{.in_features = 16, .out_features = 16}, mase::from<"x">>,
    mase::result<"act">>;

static_assert(g::valid);
