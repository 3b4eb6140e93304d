#pragma once
// mase::graph: the dynamic graph. Nodes hold an op (any_op), their input edges, the
// parameters they own (weight, bias, …) and their metadata. Node ids stay valid while other
// nodes are added and erased; nodes() is always in topological order. The members that edit the
// graph are defined in ir/graph_definitions.hpp (in the compiled mode, once, in mase::mase).

#include <mase/core/compiled.hpp>
#include <mase/core/error.hpp>
#include <mase/core/ordered_map.hpp>
#include <mase/core/suggest.hpp>
#include <mase/core/tensor.hpp>
#include <mase/ir/metadata.hpp>
#include <mase/ir/op_traits.hpp>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <fmt/core.h>

namespace mase {

// A node's handle in its graph.
struct node_id {
  std::uint32_t index = 0;
  friend constexpr bool operator==(node_id, node_id) = default;
  friend constexpr auto operator<=>(node_id, node_id) = default;
};

struct node {
  std::string name;
  any_op op;
  std::vector<node_id> inputs;
  ordered_map<tensor> parameters;  // by role: "weight", "bias", "running_mean", "value", …
  node_metadata meta;

  std::string_view op_name() const { return mase::op_name(op); }
  node_kind kind() const { return op_kind(op); }
  template <class Op>
  bool is() const noexcept { return op.is<Op>(); }
  template <class Op>
  const Op& as() const {
    if (const Op* o = op.get_if<Op>()) return *o;
    throw error(fmt::format("node {} is a {}, not a {}", name, op_name(), Op::name));
  }
};

class graph {
public:
  // --- building ------------------------------------------------------------------------------

  // Appends a node. `name` must be new and an identifier (letters, digits, '_'); inputs must be
  // nodes of this graph, as many as the op takes.
  node_id add(std::string name, any_op op, std::vector<node_id> inputs = {}) {
    return insert_at(order_.size(), std::move(name), std::move(op), std::move(inputs));
  }
  // Inserts a node just before `position` in the order (fx's inserting_before).
  node_id insert_before(node_id position, std::string name, any_op op, std::vector<node_id> inputs = {}) {
    return insert_at(position_of(position), std::move(name), std::move(op), std::move(inputs));
  }

  // Sets a parameter the node's op declares (role "weight", …), of the shape it declares.
  void set_parameter(node_id id, std::string_view role, tensor value);

  // --- lookup --------------------------------------------------------------------------------

  node& operator[](node_id id) { return const_cast<node&>(std::as_const(*this)[id]); }
  const node& operator[](node_id id) const {
    require(id.index < slots_.size() && slots_[id.index].has_value(),
            "node id {} does not refer to a node of this graph (erased, or from another graph)", id.index);
    return *slots_[id.index];
  }

  std::optional<node_id> find(std::string_view name) const {
    const auto it = by_name_.find(std::string(name));
    if (it == by_name_.end()) return std::nullopt;
    return it->second;
  }
  bool contains(std::string_view name) const { return find(name).has_value(); }
  bool contains(node_id id) const noexcept { return id.index < slots_.size() && slots_[id.index].has_value(); }

  // The node called `name`; a mase::error suggesting near names if there is none.
  node_id id(std::string_view name) const {
    if (const auto found = find(name)) return *found;
    throw error(unknown_name_message(name));
  }
  node& at(std::string_view name) { return (*this)[id(name)]; }
  const node& at(std::string_view name) const { return (*this)[id(name)]; }

  // --- traversal -----------------------------------------------------------------------------

  // Every node, in topological order (each node after its inputs).
  std::span<const node_id> order() const noexcept { return order_; }
  // Every node id's index is below this: the size for a vector indexed by node_id.index.
  std::size_t id_bound() const noexcept { return slots_.size(); }
  std::size_t size() const noexcept { return order_.size(); }
  bool empty() const noexcept { return order_.empty(); }

  // Visits the nodes in topological order.
  template <class F>
  void for_each_node(F&& f) const {
    for (node_id id : order_) f((*this)[id]);
  }
  template <class F>
  void for_each_node(F&& f) {
    for (node_id id : order_) f((*this)[id]);
  }

  std::span<const node_id> inputs(node_id id) const { return (*this)[id].inputs; }

  // The nodes that read `id`'s result, in order, each once.
  std::vector<node_id> users(node_id id) const;

  // The graph's inputs (placeholders) in order, and its output node (if it has one).
  std::vector<node_id> placeholders() const;
  std::optional<node_id> output() const {
    for (node_id id : order_)
      if ((*this)[id].kind() == node_kind::output) return id;
    return std::nullopt;
  }

  // --- rewriting -----------------------------------------------------------------------------

  // Removes a node that nothing reads any more (rewire its users first).
  void erase(node_id id);

  // Makes every reader of `old_node` read `replacement` instead. Returns how many edges moved.
  std::size_t replace_all_uses_with(node_id old_node, node_id replacement);

  // Replaces a node's op, keeping its name, inputs and metadata; parameters the new op does not
  // declare are dropped.
  void replace_op(node_id id, any_op op);

  // Replaces node `old_node` by a new node: adds it just before, moves every use, erases the old
  // one. Returns the new node's id.
  node_id replace(node_id old_node, std::string name, any_op op, std::vector<node_id> inputs);

  void rename(node_id id, std::string name);

  // --- parameters ----------------------------------------------------------------------------

  // The parameter "<node>.<role>" (e.g. "fc1.weight").
  tensor& parameter(std::string_view qualified_name) {
    return const_cast<tensor&>(std::as_const(*this).parameter(qualified_name));
  }
  const tensor& parameter(std::string_view qualified_name) const;

  // Every parameter as ("<node>.<role>", tensor), in node order.
  std::vector<std::pair<std::string, const tensor*>> named_parameters() const;

  // Same nodes in the same order, with equal ops, edges, parameters (bit for bit) and metadata.
  friend bool operator==(const graph& a, const graph& b);


private:
  static bool is_identifier(std::string_view name);

  void check_new_name(const std::string& name) const;

  static void check_arity(const std::string& name, const any_op& op, std::size_t given);

  node_id insert_at(std::size_t position, std::string name, any_op op, std::vector<node_id> inputs);

  std::size_t position_of(node_id id) const {
    (void)(*this)[id];
    return static_cast<std::size_t>(std::find(order_.begin(), order_.end(), id) - order_.begin());
  }

  std::string reserved_name(const std::string& base) const;

  // Stable topological sort (Kahn's algorithm, ties kept in the current order); a cycle is an
  // error naming a node on it.
  void restore_topological_order();

  std::string unknown_name_message(std::string_view name) const;

  std::vector<std::optional<node>> slots_;  // indexed by node_id; erased nodes leave an empty slot
  std::vector<node_id> order_;               // live nodes, topologically ordered
  std::unordered_map<std::string, node_id> by_name_;
};

}  // namespace mase

#if !MASE_EXTERN_INSTANTIATIONS
#include <mase/ir/graph_definitions.hpp>
#endif
