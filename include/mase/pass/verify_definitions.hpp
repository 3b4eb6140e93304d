#pragma once
// verify's body (pass/verify.hpp declares it): inline in the header-only mode, compiled once in
// mase::mase (src/passes.cpp) otherwise.

#include <mase/pass/verify.hpp>

// A unit that links the compiled library (mase::mase) gets these from the library; defining them again here would
// break the link with duplicate symbols.
#if MASE_EXTERN_INSTANTIATIONS && !defined(MASE_DEFINE_COMPILED)
#error "this header holds definitions that the compiled library (mase::mase) provides; include <mase/pass/verify.hpp> instead"
#endif

#include <string>
#include <unordered_set>
#include <vector>

#include <fmt/core.h>

namespace mase {

namespace detail {

inline void verify_tensor_meta(const tensor_meta& t, const std::string& where, std::vector<std::string>& problems) {
  try {
    format revalidated(t.precision.variant());  // throws if the descriptor breaks a rule
    (void)revalidated;
  } catch (const error& e) {
    problems.push_back(fmt::format("{}: {}", where, e.what()));
  }
  if (t.value && !(t.value->shape() == t.shape))
    problems.push_back(fmt::format("{}: the recorded value has shape {} but the entry says {}", where,
                                   to_string(t.value->shape()), to_string(t.shape)));
}

inline void verify_node(const graph& g, node_id id, const std::vector<shape_list>& results,
                        std::vector<std::string>& problems, verify_info& info) {
  const node& n = g[id];
  const std::string where = fmt::format("node {} ({})", n.name, n.op_name());
  // Parameters: exactly those the op declares, with the declared shapes.
  const parameter_list specs = op_parameters(n.op);
  for (const parameter_spec& p : specs) {
    const auto it = n.parameters.find(p.role);
    if (it == n.parameters.end()) problems.push_back(fmt::format("{}: parameter {} is missing", where, p.role));
    else if (!(it->second.shape() == p.shape))
      problems.push_back(fmt::format("{}: parameter {} has shape {}, the op needs {}", where, p.role,
                                     to_string(it->second.shape()), to_string(p.shape)));
  }
  for (const auto& entry : n.parameters) {  // no structured binding: clang 14 cannot capture one
    const std::string& role = entry.first;
    if (std::none_of(specs.begin(), specs.end(), [&](const parameter_spec& p) { return p.role == role; }))
      problems.push_back(fmt::format("{}: parameter {} is not one its op declares", where, role));
  }

  const common_meta& c = n.meta.common;
  if (c.mase_op.empty()) return;  // no common metadata yet: nothing more to compare
  if (c.mase_op != n.op_name())
    problems.push_back(fmt::format("{}: metadata mase_op is {}, the op is {}", where, c.mase_op, n.op_name()));
  if (c.mase_type != n.kind())
    problems.push_back(fmt::format("{}: metadata mase_type is {}, the op's kind is {}", where, to_string(c.mase_type),
                                   to_string(n.kind())));
  for (const auto& [name, arg] : c.args)
    if (const auto* t = std::get_if<tensor_meta>(&arg)) {
      verify_tensor_meta(*t, fmt::format("{}: args.{}", where, name), problems);
      ++info.tensor_entries;
    }
  for (const auto& [name, result] : c.results) {
    verify_tensor_meta(result, fmt::format("{}: results.{}", where, name), problems);
    ++info.tensor_entries;
  }
  if (c.args.empty() && c.results.empty()) return;  // initialised, not yet annotated
  for (std::size_t i = 0; i < n.inputs.size(); ++i) {
    const auto it = c.args.find(data_in_name(i));
    const auto* t = it == c.args.end() ? nullptr : std::get_if<tensor_meta>(&it->second);
    if (t == nullptr) {
      problems.push_back(fmt::format("{}: args has no tensor entry {} for input {}", where, data_in_name(i),
                                     g[n.inputs[i]].name));
    } else if (const shape_list& produced = results[n.inputs[i].index];
               !produced.empty() && !op_takes_all_results(n.op) && !(t->shape == produced[0])) {
      problems.push_back(fmt::format("{}: args.{} has shape {}, but input {} produces {}", where, data_in_name(i),
                                     to_string(t->shape), g[n.inputs[i]].name, to_string(produced[0])));
    }
  }
  if (c.args.contains(data_in_name(n.inputs.size())))
    problems.push_back(fmt::format("{}: args has {} but the node has only {} input(s)", where,
                                   data_in_name(n.inputs.size()), n.inputs.size()));
  for (const parameter_spec& p : specs) {
    const auto it = c.args.find(p.role);
    const auto* t = it == c.args.end() ? nullptr : std::get_if<tensor_meta>(&it->second);
    if (t == nullptr) problems.push_back(fmt::format("{}: args has no entry for parameter {}", where, p.role));
    else if (!(t->shape == p.shape))
      problems.push_back(fmt::format("{}: args.{} has shape {}, the parameter has {}", where, p.role,
                                     to_string(t->shape), to_string(p.shape)));
  }
  const shape_list& mine = results[id.index];
  if (c.results.size() != static_cast<std::size_t>(mine.size()))
    problems.push_back(fmt::format("{}: results has {} entries, the op produces {}", where, c.results.size(), mine.size()));
  for (int i = 0; i < mine.size(); ++i) {
    const auto it = c.results.find(data_out_name(static_cast<std::size_t>(i)));
    if (it == c.results.end()) problems.push_back(fmt::format("{}: results has no {}", where, data_out_name(i)));
    else if (!(it->second.shape == mine[i]))
      problems.push_back(fmt::format("{}: results.{} has shape {}, the op produces {}", where, data_out_name(i),
                                     to_string(it->second.shape), to_string(mine[i])));
  }
}

}  // namespace detail

MASE_COMPILED_INLINE verify_info verify_pass::run(const graph& g) const {
  verify_info info;
  std::vector<std::string> problems;
  std::unordered_set<std::string> names;
  std::vector<bool> seen(g.id_bound(), false);
  std::vector<shape_list> results(g.id_bound());
  for (node_id id : g.order()) {
    const node& n = g[id];
    ++info.nodes;
    if (!names.insert(n.name).second) problems.push_back(fmt::format("node name {} is used twice", n.name));
    bool edges_ok = op_arity(n.op).accepts(n.inputs.size());
    if (!edges_ok)
      problems.push_back(fmt::format("node {} ({}): {} inputs is not a number its op accepts", n.name, n.op_name(),
                                     n.inputs.size()));
    for (node_id in : n.inputs) {
      ++info.edges;
      if (!g.contains(in)) {
        problems.push_back(fmt::format("node {}: an input edge points at a node that does not exist", n.name));
        edges_ok = false;
      } else if (!seen[in.index]) {
        problems.push_back(fmt::format("node {}: input {} does not come before it", n.name, g[in].name));
        edges_ok = false;
      }
    }
    if (edges_ok) {
      try {
        results[id.index] = infer_node_shapes(g, id, [&](node_id i) -> const shape_list& { return results[i.index]; });
      } catch (const error& e) {
        problems.push_back(e.what());
      }
    }
    seen[id.index] = true;
    detail::verify_node(g, id, results, problems, info);
  }
  if (!problems.empty()) {
    std::string message = fmt::format("verify: the graph has {} problem(s):", problems.size());
    for (std::size_t i = 0; i < problems.size() && i < 50; ++i) message += fmt::format("\n  - {}", problems[i]);
    if (problems.size() > 50) message += fmt::format("\n  … and {} more", problems.size() - 50);
    throw error(message);
  }
  return info;
}

}  // namespace mase
