// A layer reads a name no node defines (a typo): the diagnostic names the layer and the name.
#include <mase/ir/static_graph.hpp>

using mlp = mase::static_graph<
    mase::input<"x", mase::shape{1, 784}>,
    mase::layer<"fc1", mase::op::linear{.in_features = 784, .out_features = 10}, mase::from<"inptu">>,
    mase::result<"fc1">>;

static_assert(mlp::valid);
