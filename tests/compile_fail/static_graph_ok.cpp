// A static graph using every part of the spelling compiles cleanly with warnings as errors.
#include <mase/ir/static_graph.hpp>

#include <cstdint>

namespace {

using net = mase::static_graph<
    mase::input<"x", mase::shape{4, 12}, mase::fixed_fmt{.width = 8, .frac = 4}>,
    mase::input<"offset", mase::shape{6}>,
    mase::layer<"fc", mase::op::linear{.in_features = 12, .out_features = 12}, mase::from<"x">>,
    mase::layer<"halves", mase::op::split{.split_size = 6, .dim = -1}, mase::from<"fc">>,
    mase::layer<"left", mase::op::getitem{.index = 0}, mase::from<"halves">>,
    mase::layer<"right", mase::op::getitem{.index = 1}, mase::from<"halves">>,
    mase::layer<"sum", mase::op::add{}, mase::from<"left", "right">>,
    mase::layer<"shifted", mase::op::add{}, mase::from<"sum", "offset">, mase::formats::bfloat16>,
    mase::layer<"act", mase::op::relu{}, mase::from<"shifted">, mase::fixed_fmt{.width = 8, .frac = 3}>,
    mase::layer<"drop", mase::op::dropout{.p = 0.1}, mase::from<"act">>,
    mase::result<"drop", "right">>;

static_assert(net::valid);
static_assert(net::shape_of<"fc"> == mase::shape{4, 12});
static_assert(net::shapes_of<"halves">.size() == 2);
static_assert(net::shape_of<"shifted"> == mase::shape{4, 6});
static_assert(net::format_of<"act"> == mase::fixed_fmt{.width = 8, .frac = 3});
static_assert(net::shapes_of<"output">.size() == 2);

constexpr std::int64_t weights() {
  std::int64_t n = 0;
  net::for_each_node([&](auto node) {
    for (const mase::parameter_spec& p : node.parameters) n += p.shape.numel();
  });
  return n;
}
static_assert(weights() == 12 * 12 + 12);

}  // namespace

mase::graph make_net() { return net::to_graph(); }
