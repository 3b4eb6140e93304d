// relu cannot read split's tuple of results directly; getitem picks one.
#include <mase/ir/static_graph.hpp>

using g = mase::static_graph<
    mase::input<"x", mase::shape{2, 8}>,
    mase::layer<"halves", mase::op::split{.split_size = 4, .dim = 1}, mase::from<"x">>,
    mase::layer<"act", mase::op::relu{}, mase::from<"halves">>,
    mase::result<"act">>;

static_assert(g::valid);
