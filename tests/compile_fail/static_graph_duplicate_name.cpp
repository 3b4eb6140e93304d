// Two nodes called fc1.
#include <mase/ir/static_graph.hpp>

using mlp = mase::static_graph<
    mase::input<"x", mase::shape{1, 784}>,
    mase::layer<"fc1", mase::op::linear{.in_features = 784, .out_features = 256}, mase::from<"x">>,
    mase::layer<"fc1", mase::op::relu{}, mase::from<"x">>,
    mase::result<"fc1">>;

static_assert(mlp::valid);
