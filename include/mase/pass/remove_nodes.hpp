#pragma once
// remove_dropout / remove_identity: take pass-through nodes out of the graph by rewiring their
// readers to their input and erasing them (MASE's tutorial 1 does this for dropout).

#include <mase/ir/op/dropout.hpp>
#include <mase/ir/op/identity.hpp>
#include <mase/pass/pipeline.hpp>

#include <vector>

namespace mase {

struct removed_nodes {
  std::vector<std::string> names;  // the nodes removed, in graph order
  friend bool operator==(const removed_nodes&, const removed_nodes&) = default;
};

// Removes every node holding an `Op`, which must pass its one input through unchanged.
template <class Op>
removed_nodes bypass_nodes(graph& g) {
  removed_nodes removed;
  const std::vector<node_id> order(g.order().begin(), g.order().end());
  for (node_id id : order) {
    if (!g[id].is<Op>()) continue;
    g.replace_all_uses_with(id, g[id].inputs.at(0));
    removed.names.push_back(g[id].name);
    g.erase(id);
  }
  return removed;
}

// A removed node's readers keep their metadata: their inputs had the same shape and format.
template <class Op>
struct remove_nodes_pass {
  using needs = facts<>;
  using provides = facts<>;
  removed_nodes run(graph& g) const { return bypass_nodes<Op>(g); }
};

struct remove_dropout_pass : remove_nodes_pass<op::dropout> {};
struct remove_identity_pass : remove_nodes_pass<op::identity> {};

inline constexpr remove_dropout_pass remove_dropout{};
inline constexpr remove_identity_pass remove_identity{};

}  // namespace mase
