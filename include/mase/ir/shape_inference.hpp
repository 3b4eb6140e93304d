#pragma once
// Shape inference for one node of a dynamic graph, from the shape rules of its op.

#include <mase/ir/graph.hpp>
#include <mase/ir/op_traits.hpp>

#include <string>
#include <vector>

#include <fmt/core.h>

namespace mase {

// The shapes of a node's results, from its inputs' results; mase::error naming the node if the
// inputs do not fit its op. `results_of(id)` gives an input node's result shapes.
template <class ResultsOf>
shape_list infer_node_shapes(const graph& g, node_id id, ResultsOf&& results_of) {
  const node& n = g[id];
  std::vector<shape> in;
  if (op_takes_all_results(n.op)) {
    for (const shape& s : results_of(n.inputs.at(0))) in.push_back(s);
  } else {
    for (node_id input : n.inputs) {
      const shape_list& r = results_of(input);
      require(!r.empty(), "node {}: its input {} has no result", n.name, g[input].name);
      in.push_back(r[0]);
    }
  }
  const shape_result r = op_infer_shapes(n.op, in);
  if (!r.ok()) {
    std::string shapes;
    for (const shape& s : in) shapes += fmt::format("{}{}", shapes.empty() ? "" : ", ", to_string(s));
    throw error(fmt::format("node {} ({}): {}; input shape(s) {}", n.name, to_string(n.op), r.error,
                            shapes.empty() ? "(none)" : shapes));
  }
  return r.shapes;
}

}  // namespace mase
