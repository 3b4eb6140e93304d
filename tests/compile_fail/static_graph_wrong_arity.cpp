// add takes two inputs; "sum" is given one.
#include <mase/ir/static_graph.hpp>

using g = mase::static_graph<
    mase::input<"x", mase::shape{2, 3}>,
    mase::layer<"sum", mase::op::add{}, mase::from<"x">>,
    mase::result<"sum">>;

static_assert(g::valid);
