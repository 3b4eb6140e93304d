// fc2 expects 250 input features but fc1 produces 256: the diagnostic names fc2 and quotes
// linear's shape rule and the input shape.
#include <mase/ir/static_graph.hpp>

using mlp = mase::static_graph<
    mase::input<"x", mase::shape{1, 784}>,
    mase::layer<"fc1", mase::op::linear{.in_features = 784, .out_features = 256}, mase::from<"x">>,
    mase::layer<"fc2", mase::op::linear{.in_features = 250, .out_features = 10}, mase::from<"fc1">>,
    mase::result<"fc2">>;

static_assert(mlp::shape_of<"output"> == mase::shape{1, 10});
