// A layer's result format breaks a format rule: the rule's message and the node's name appear.
#include <mase/ir/static_graph.hpp>

using g = mase::static_graph<
    mase::input<"x", mase::shape{2, 8}>,
    mase::layer<"act", mase::op::relu{}, mase::from<"x">, mase::fixed_fmt{.width = 0, .frac = 0}>,
    mase::result<"act">>;

static_assert(g::valid);
