#pragma once
// mase::graph's editing members (ir/graph.hpp declares them): inline in the header-only mode,
// compiled once in mase::mase (src/vocabulary.cpp) otherwise.

#include <mase/ir/graph.hpp>

// A unit that links the compiled library (mase::mase) gets these from the library; defining them again here would
// break the link with duplicate symbols.
#if MASE_EXTERN_INSTANTIATIONS && !defined(MASE_DEFINE_COMPILED)
#error "this header holds definitions that the compiled library (mase::mase) provides; include <mase/ir/graph.hpp> instead"
#endif

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/core.h>

namespace mase {

MASE_COMPILED_INLINE std::string graph::unknown_name_message(std::string_view name) const {
  std::vector<std::string_view> names;
  for (node_id id : order_) names.push_back((*this)[id].name);
  std::string message = fmt::format("no node named \"{}\" in the graph", name);
  if (const std::string near = nearest_names(name, names); !near.empty()) {
    message += fmt::format("; did you mean {}?", near);
  } else if (names.size() <= 20) {
    std::string all;
    for (std::string_view n : names) all += fmt::format("{}{}", all.empty() ? "" : ", ", n);
    message += fmt::format("; its nodes are: {}", all.empty() ? "(none)" : all);
  }
  return message;
}

MASE_COMPILED_INLINE void graph::set_parameter(node_id id, std::string_view role, tensor value) {
  node& n = (*this)[id];
  const parameter_list specs = op_parameters(n.op);
  const auto spec = std::find_if(specs.begin(), specs.end(), [&](const parameter_spec& p) { return p.role == role; });
  if (spec == specs.end()) {
    std::string roles;
    for (const parameter_spec& p : specs) roles += fmt::format("{}{}", roles.empty() ? "" : ", ", p.role);
    throw error(fmt::format("node {} ({}) has no parameter \"{}\"; its parameters are: {}", n.name, n.op_name(), role,
                            roles.empty() ? "(none)" : roles));
  }
  require(value.shape() == spec->shape,
          "parameter {}.{} must have shape {}, not {}", n.name, role, to_string(spec->shape),
                      to_string(value.shape()));
  n.parameters.insert_or_assign(role, std::move(value));
}

MASE_COMPILED_INLINE std::vector<node_id> graph::users(node_id id) const {
  (void)(*this)[id];
  std::vector<node_id> out;
  for (node_id candidate : order_) {
    const auto& in = (*this)[candidate].inputs;
    if (std::find(in.begin(), in.end(), id) != in.end()) out.push_back(candidate);
  }
  return out;
}

MASE_COMPILED_INLINE std::vector<node_id> graph::placeholders() const {
  std::vector<node_id> out;
  for (node_id id : order_)
    if ((*this)[id].kind() == node_kind::placeholder) out.push_back(id);
  return out;
}

MASE_COMPILED_INLINE void graph::erase(node_id id) {
  const node& n = (*this)[id];
  const std::vector<node_id> readers = users(id);
  if (!readers.empty()) {
    std::string names;
    for (node_id r : readers) names += fmt::format("{}{}", names.empty() ? "" : ", ", (*this)[r].name);
    throw error(fmt::format("cannot erase node {}: {} still read(s) it; replace_all_uses_with it first", n.name, names));
  }
  by_name_.erase(n.name);
  order_.erase(order_.begin() + static_cast<std::ptrdiff_t>(position_of(id)));
  slots_[id.index].reset();
}

MASE_COMPILED_INLINE std::size_t graph::replace_all_uses_with(node_id old_node, node_id replacement) {
  (void)(*this)[old_node];
  (void)(*this)[replacement];
  std::size_t moved = 0;
  for (node_id user : order_) {
    if (user == replacement) continue;  // a replacement that reads the old node keeps doing so
    for (node_id& in : (*this)[user].inputs)
      if (in == old_node) {
        in = replacement;
        ++moved;
      }
  }
  if (moved > 0) restore_topological_order();
  return moved;
}

MASE_COMPILED_INLINE void graph::replace_op(node_id id, any_op op) {
  node& n = (*this)[id];
  check_arity(n.name, op, n.inputs.size());
  const parameter_list specs = op_parameters(op);
  ordered_map<tensor> kept;
  for (auto& entry : n.parameters)  // no structured binding: clang 14 cannot capture one in the lambda
    if (std::any_of(specs.begin(), specs.end(), [&](const parameter_spec& p) {
          return p.role == entry.first && p.shape == entry.second.shape();
        }))
      kept.insert_or_assign(entry.first, std::move(entry.second));
  n.parameters = std::move(kept);
  n.op = std::move(op);
}

MASE_COMPILED_INLINE node_id graph::replace(node_id old_node, std::string name, any_op op, std::vector<node_id> inputs) {
  const std::string old_name = (*this)[old_node].name;
  const bool same_name = name == old_name;
  const node_id fresh = insert_before(old_node, same_name ? reserved_name(old_name) : std::move(name), std::move(op),
                                      std::move(inputs));
  replace_all_uses_with(old_node, fresh);
  erase(old_node);
  if (same_name) rename(fresh, old_name);
  return fresh;
}

MASE_COMPILED_INLINE void graph::rename(node_id id, std::string name) {
  node& n = (*this)[id];
  if (name == n.name) return;
  check_new_name(name);
  by_name_.erase(n.name);
  by_name_.emplace(name, id);
  n.name = std::move(name);
}

MASE_COMPILED_INLINE const tensor& graph::parameter(std::string_view qualified_name) const {
  const auto dot = qualified_name.rfind('.');
  require(dot != std::string_view::npos,
          "parameter name \"{}\" must be <node>.<role>, e.g. fc1.weight", qualified_name);
  const node& n = at(qualified_name.substr(0, dot));
  const auto role = qualified_name.substr(dot + 1);
  const auto it = n.parameters.find(role);
  if (it == n.parameters.end())
    throw error(fmt::format("node {} has no parameter \"{}\"; it has: {}", n.name, role, n.parameters.key_list()));
  return it->second;
}

MASE_COMPILED_INLINE std::vector<std::pair<std::string, const tensor*>> graph::named_parameters() const {
  std::vector<std::pair<std::string, const tensor*>> out;
  for (node_id id : order_)
    for (const auto& [role, t] : (*this)[id].parameters) out.emplace_back(fmt::format("{}.{}", (*this)[id].name, role), &t);
  return out;
}

MASE_COMPILED_INLINE bool graph::is_identifier(std::string_view name) {
  if (name.empty() || (name[0] >= '0' && name[0] <= '9')) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  });
}

MASE_COMPILED_INLINE void graph::check_new_name(const std::string& name) const {
  require(is_identifier(name), "node name \"{}\" is not an identifier: use letters, digits and '_', "
                                           "not starting with a digit (names become Verilog and file names)",
                                           name);
  require(!contains(name), "a node named {} already exists; node names must be unique", name);
}

MASE_COMPILED_INLINE void graph::check_arity(const std::string& name, const any_op& op, std::size_t given) {
  const arity a = op_arity(op);
  if (a.accepts(given)) return;
  const std::string expected = a.min == a.max               ? fmt::format("{}", a.min)
                               : a.max == arity::unbounded ? fmt::format("at least {}", a.min)
                                                           : fmt::format("{} to {}", a.min, a.max);
  throw error(fmt::format("node {} ({}) takes {} input(s), but {} were given", name, op_name(op), expected, given));
}

MASE_COMPILED_INLINE node_id graph::insert_at(std::size_t position, std::string name, any_op op, std::vector<node_id> inputs) {
  check_new_name(name);
  check_arity(name, op, inputs.size());
  for (node_id in : inputs) {
    require(contains(in), "node {}: input id {} is not a node of this graph", name, in.index);
    require(position_of(in) < position,
            "node {}: input {} must come before it in the graph", name, (*this)[in].name);
  }
  const node_id id{static_cast<std::uint32_t>(slots_.size())};
  slots_.emplace_back(node{.name = name, .op = std::move(op), .inputs = std::move(inputs), .parameters = {}, .meta = {}});
  by_name_.emplace(std::move(name), id);
  order_.insert(order_.begin() + static_cast<std::ptrdiff_t>(position), id);
  return id;
}

MASE_COMPILED_INLINE std::string graph::reserved_name(const std::string& base) const {
  for (int i = 0;; ++i) {
    std::string candidate = fmt::format("{}_replacement_{}", base, i);
    if (!contains(candidate)) return candidate;
  }
}

MASE_COMPILED_INLINE void graph::restore_topological_order() {
  std::vector<node_id> sorted;
  sorted.reserve(order_.size());
  std::vector<bool> placed(slots_.size(), false);
  while (sorted.size() < order_.size()) {
    bool progressed = false;
    for (node_id id : order_) {
      if (placed[id.index]) continue;
      const auto& in = (*this)[id].inputs;
      if (std::all_of(in.begin(), in.end(), [&](node_id i) { return placed[i.index]; })) {
        placed[id.index] = true;
        sorted.push_back(id);
        progressed = true;
      }
    }
    if (!progressed) {
      for (node_id id : order_)
        if (!placed[id.index])
          throw error(fmt::format("the graph has a cycle through node {}", (*this)[id].name));
    }
  }
  order_ = std::move(sorted);
}

MASE_COMPILED_INLINE bool operator==(const graph& a, const graph& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const node& x = a[a.order_[i]];
    const node& y = b[b.order_[i]];
    if (x.name != y.name || !op_equal(x.op, y.op) || x.parameters != y.parameters || !(x.meta == y.meta) ||
        x.inputs.size() != y.inputs.size())
      return false;
    for (std::size_t k = 0; k < x.inputs.size(); ++k)
      if (a[x.inputs[k]].name != b[y.inputs[k]].name) return false;
  }
  return true;
}

}  // namespace mase
